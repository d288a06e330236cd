"""`statedir mcp`: the store served to agent hosts over the Model Context Protocol (stdio).

`tools` generates the tool list from the command table (statedir.commands, which the CLI lends
the server through `host`, with how the store is opened) and `served_tools` what the server
offers beyond it (`research_tools`, `init`, file arguments, paged reads), `calls` calls the API a
command names (statedir.api.documents) on one store kept open, `resources` serves the guide and
the templates, `server` is the only module importing the MCP SDK (the optional extra
`statedir[mcp]`). What agents read of each tool: `catalog` (groups, titles, hints), `vocabulary`
(enums from the store's templates, read by statedir.api.vocabularies), `checkpoint_question` (the
form a user's question is put in), `outputs` (output schemas, structured content), `wording` (the
CLI's flags and commands in the tools' words).
"""

"""`statedir mcp`: the store served to agent hosts over the Model Context Protocol (stdio).

`tools` generates the tool list from the CLI's commands, `calls` runs a call in-process on one
store kept open, `server` is the only module importing the MCP SDK (the optional extra
`statedir[mcp]`). What agents read: `catalog` (groups, titles, hints), `vocabulary` (enums from
the store's templates), `outputs` (output schemas, structured content), `wording` (the CLI's
flags and commands in the tools' own words).
"""

"""statedir's command table: each command's path, function, help and parameters, read off its hints,
and the API call it names (`Command.call`); typer's CLI, the plain parse and the MCP tools are made
from it. `document`: what a command hands back (`Document`), serialised one way. Imports nothing of
statedir, typer or click."""

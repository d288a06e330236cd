"""statedir's command table: each command's path, function, help and parameters as plain data,
read off the functions' hints; the CLI builds typer's commands from it, the MCP server its tools.
Imports nothing of statedir (and neither typer nor click)."""

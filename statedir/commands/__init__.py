"""statedir's command table: each command's path, function, help and parameters, read off its hints;
typer's CLI, the plain parse and the MCP tools are made from it. Imports nothing of statedir, typer or click."""

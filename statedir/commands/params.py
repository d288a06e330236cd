"""A command's parameters as declared: `Option` and `Argument` take typer's arguments and hold
them, so a command module loads without typer; `statedir.commands.table` reads them into the
command table (typer's own are made from it, `direct` parses a plain call with it, the MCP
server's tools are made of it). Imports nothing of statedir."""
from __future__ import annotations

from typing import Any


class Param:
    """A typer.Option or typer.Argument, written down: its declarations and settings."""

    __slots__ = ("decls", "settings")
    kind = ""

    def __init__(self, *decls: str, **settings: Any) -> None:
        self.decls = decls
        self.settings = settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self.decls))}, **{self.settings!r})"


class Option(Param):
    """typer.Option's arguments: `Annotated[str, Option("--reason", help=...)]`."""

    __slots__ = ()
    kind = "option"


class Argument(Param):
    """typer.Argument's arguments: `Annotated[str, Argument(help=...)]`."""

    __slots__ = ()
    kind = "argument"

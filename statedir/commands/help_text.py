"""A command's help, read off its function's docstring as --help shows it: the MCP tools'
descriptions (typer reads the docstring itself). Apart from the command table, since reading a
docstring as --help does takes inspect (with dataclasses, about 10 ms), which a plain call never
needs."""
from __future__ import annotations

import inspect

from statedir.commands.table import Command


def help_of(command: Command) -> str:
    """The function's docstring, as --help shows it (up to a form feed)."""
    return (inspect.getdoc(command.function) or "").split("\f")[0]


def summary(command: Command) -> str:
    """The help's first paragraph on one line."""
    return " ".join(help_of(command).strip().split("\n\n")[0].split())

"""The command table: a command (its path and function) and its parameters, read once from the
function's hints (`Annotated[type, Option(...)]`). The one reader of those hints: typer's commands
(`statedir.cli.registry.typed`), the plain parse (`statedir.cli.direct`) and the MCP tools
(`statedir.mcp.tools`) are all made from what it reads. Imports only `typing` (the plain parse pays
for nothing more); a command's help, read with inspect, is statedir.commands.help_text's."""
from __future__ import annotations

import typing
from collections.abc import Callable
from pathlib import Path
from types import UnionType
from typing import Any

from statedir.commands.params import Param

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__slots__": ()})()  # no default: required
TYPES = (str, int, float, bool, Path)  # the Python types a parameter's values take


class Exit(Exception):
    """A command's exit status, said without an error of statedir's (the research ledger's
    flat refusal, printed already): the CLI exits with it, the server returns it."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Parameter:
    """One parameter of a command as its hint declares it."""

    __slots__ = ("name", "kind", "flags", "off_flags", "type", "many", "optional", "choices", "default",
                 "declared", "base", "hint")

    def __init__(self, name: str, hint: Any, default: Any) -> None:
        self.name = name
        self.default = default
        self.hint = hint  # as written, Annotated extras and all
        self.base = hint  # the type the hint names, `Optional[list[str]]` say (its Annotated extras aside)
        extras: tuple[Any, ...] = ()
        if typing.get_origin(hint) is typing.Annotated:
            self.base, *rest = typing.get_args(hint)
            extras = tuple(rest)
        declared = [e for e in extras if isinstance(e, Param)]
        self.declared: Param | None = declared[0] if len(declared) == 1 else None
        self.kind = self.declared.kind if self.declared else ("argument" if default is MISSING else "option")
        self.flags, self.off_flags = _flags(self.declared.decls if self.declared else (), name, self.kind)
        inner = self.base
        self.optional = typing.get_origin(inner) in (typing.Union, UnionType)
        if self.optional:
            given = [a for a in typing.get_args(inner) if a is not type(None)]
            inner = given[0] if len(given) == 1 else None
        self.many = typing.get_origin(inner) is list
        if self.many:
            (inner,) = typing.get_args(inner)
        self.choices: tuple[str, ...] = ()
        if typing.get_origin(inner) is typing.Literal:
            self.choices, inner = tuple(str(c) for c in typing.get_args(inner)), str
        self.type: type | None = inner if inner in TYPES else None  # None: a type the table does not know

    @property
    def settings(self) -> dict[str, Any]:
        """typer's settings of the declaration (help, envvar, metavar, ...)."""
        return self.declared.settings if self.declared else {}

    @property
    def required(self) -> bool:
        return self.default is MISSING

    @property
    def flag(self) -> bool:
        """An option taking no value: `--line`, `--history/--no-history`."""
        return self.kind == "option" and self.type is bool and not self.many

    @property
    def help(self) -> str:
        return str(self.settings.get("help") or "")

    @property
    def envvar(self) -> str | None:
        envvar = self.settings.get("envvar")
        return envvar if isinstance(envvar, str) else None

    @property
    def hidden(self) -> bool:
        return bool(self.settings.get("hidden"))

    @property
    def metavar(self) -> str | None:
        """The placeholder --help shows: an argument's name in capitals unless declared."""
        declared = self.settings.get("metavar")
        return declared if declared or self.kind == "option" else self.name.upper()

    def __repr__(self) -> str:
        return f"Parameter({self.name!r}, {self.kind}, {self.flags or ''}{self.base!r} = {self.default!r})"


def _flags(decls: tuple[str, ...], name: str, kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An option's flags and its off flags (`--no-history` of `--history/--no-history`)."""
    if kind != "option":
        return (), ()
    on: list[str] = []
    off: list[str] = []
    for decl in decls or ("--" + name.replace("_", "-"),):
        first, slash, second = decl.partition("/")
        on.append(first.strip())
        if slash:
            off.append(second.strip())
    return tuple(on), tuple(off)


def parameters(function: Callable[..., Any]) -> tuple[Parameter, ...]:
    """`function`'s parameters, in order, as its hints declare them."""
    code = function.__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    defaults = dict(zip(names[code.co_argcount - len(function.__defaults__ or ()):code.co_argcount],
                        function.__defaults__ or (), strict=True))
    defaults.update(function.__kwdefaults__ or {})
    hints = typing.get_type_hints(function, include_extras=True)
    return tuple(Parameter(name, hints.get(name, str), defaults.get(name, MISSING)) for name in names)


class Command:
    """One command of the table: the words naming it (`("stage",)`, `("bus", "set")`), the
    function it calls, its help and its parameters; `group`: the group of MCP tools it declares
    (None: statedir.mcp.catalog finds one)."""

    __slots__ = ("path", "function", "hidden", "group", "_call", "_parameters")

    def __init__(self, path: tuple[str, ...], function: Callable[..., Any], hidden: bool = False,
                 group: str | None = None, call: str | Callable[..., Any] | None = None) -> None:
        self.path = path
        self.function = function
        self.hidden = hidden
        self.group = group
        self._call = call
        self._parameters: tuple[Parameter, ...] | None = None

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        if self._parameters is None:
            self._parameters = parameters(self.function)
        return self._parameters

    @property
    def call(self) -> str | Callable[..., Any]:
        """What the command hands back, made of the API's result: the name statedir.api.documents
        knows it by (`documents.call(name)`: the MCP server calls it, the CLI prints it), or the
        function itself where one was given."""
        return self._call or "_".join(self.path).replace("-", "_")

    def __repr__(self) -> str:
        return f"Command({' '.join(self.path)!r})"

"""A command's call read straight from argv, without typer: for the plain calls a program
makes (`statedir stage r1 1 in_progress --json`), so a transition does not pay typer's and
click's start-up. Reads only what it is sure typer would read the same way (a test compares
the two over many argv); anything else (help, an unknown or repeated option, a value that
looks like an option, a missing argument, a bad number) answers None, and typer parses it,
with typer's own messages. Reads the parameters with the command table's reader
(statedir.commands.table); imports the command's module and nothing else of statedir."""
from __future__ import annotations

import os
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.commands import table
from statedir.commands.table import Parameter

_SETTINGS = frozenset({"help", "envvar", "show_envvar", "metavar", "show_default", "hidden",
                       "autocompletion"})  # completion is the shell's, never the parse's
_SCALARS: dict[Any, Callable[[str], Any]] = {str: str, int: int, Path: Path}
_MISSING = table.MISSING


class _Spec:
    """One parameter as direct reads it."""

    __slots__ = ("name", "kind", "decls", "convert", "many", "default", "envvar")

    def __init__(self, name: str, kind: str, decls: tuple[str, ...], convert: Callable[[str], Any] | None,
                 many: bool, default: Any, envvar: str | None) -> None:
        self.name = name
        self.kind = kind  # "option" or "argument"
        self.decls = decls
        self.convert = convert  # None: a flag
        self.many = many  # a repeatable option, or an argument taking every remaining word
        self.default = default  # _MISSING: required
        self.envvar = envvar


def _spec(parameter: Parameter) -> _Spec | None:
    """The parameter as direct reads it, or None where typer must (a setting only typer knows,
    a type or shape whose reading is click's)."""
    settings = parameter.settings
    if parameter.declared is None or not set(settings) <= _SETTINGS or parameter.choices:
        return None
    envvar = settings.get("envvar")
    if envvar is not None and not isinstance(envvar, str):
        return None
    if parameter.optional and (parameter.type is None or parameter.default is not None):
        return None
    if parameter.many and envvar is not None:  # click splits a repeatable option's variable on whitespace
        return None
    decls = parameter.declared.decls
    if parameter.flag and decls and parameter.default is False:
        if parameter.off_flags or envvar is not None:
            return None
        return _Spec(parameter.name, "option", decls, None, False, False, None)
    convert = _SCALARS.get(parameter.type)
    if convert is None or (parameter.kind == "option" and not decls) or (parameter.kind == "argument" and decls):
        return None
    return _Spec(parameter.name, parameter.kind, decls, convert, parameter.many, parameter.default, envvar)


def _specs(function: Callable[..., Any]) -> list[_Spec] | None:
    specs = [_spec(parameter) for parameter in table.parameters(function)]
    if any(s is None for s in specs):
        return None
    arguments = [s for s in specs if s is not None and s.kind == "argument"]
    if any(s.many for s in arguments[:-1]):  # click shares words out among them: leave that to it
        return None
    return typing.cast("list[_Spec]", specs)


def parse(function: Callable[..., Any], argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would call `function` with for `argv` (the words after the
    command's name), or None where typer must read them."""
    specs = _specs(function)
    if specs is None:
        return None
    by_flag = {decl: s for s in specs if s.kind == "option" for decl in s.decls}
    given: dict[str, Any] = {}
    words: list[str] = []
    rest = iter(argv)
    for word in rest:
        if word == "--":
            words.extend(rest)
        elif word == "-" or not word.startswith("-"):
            words.append(word)
        else:
            flag, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
            spec = by_flag.get(flag)
            if spec is None or (spec.name in given and not spec.many):
                return None
            if spec.convert is None:
                if eq:
                    return None
                given[spec.name] = True
                continue
            if not eq:
                following = next(rest, None)
                if following is None or following.startswith("-"):  # click's reading: left to typer
                    return None
                value = following
            try:
                converted = spec.convert(value)
            except ValueError:
                return None
            if spec.many:
                given.setdefault(spec.name, []).append(converted)
            else:
                given[spec.name] = converted
    arguments = [s for s in specs if s.kind == "argument"]
    if len(words) > len(arguments) and not (arguments and arguments[-1].many):
        return None
    for at, spec in enumerate(arguments):
        taken = words[at:] if spec.many else words[at:at + 1]
        if taken:
            try:
                values = [spec.convert(w) for w in taken]  # type: ignore[misc]
            except ValueError:
                return None
            given[spec.name] = values if spec.many else values[0]
    for spec in specs:
        if spec.name in given:
            continue
        from_env = os.environ.get(spec.envvar) if spec.envvar else None
        if from_env:
            try:
                given[spec.name] = spec.convert(from_env)  # type: ignore[misc]
            except ValueError:
                return None
        elif spec.default is _MISSING:
            return None
        else:
            given[spec.name] = spec.default
    return given

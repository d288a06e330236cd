"""A command's call read straight from argv, without typer: for the plain calls a program
makes (`statedir stage r1 1 in_progress --json`), so a transition does not pay typer's and
click's start-up. Reads only what it is sure typer would read the same way (a test compares
the two over many argv); anything else (help, an unknown or repeated option, a value that
looks like an option, a missing argument, a bad number) answers None, and typer parses it,
with typer's own messages. Imports statedir.cli.params and the command's module only."""
from __future__ import annotations

import os
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from statedir.cli.params import Param

_SETTINGS = frozenset({"help", "envvar", "show_envvar", "metavar", "show_default", "hidden",
                       "autocompletion"})  # completion is the shell's, never the parse's
_SCALARS: dict[Any, Callable[[str], Any]] = {str: str, int: int, Path: Path}
_MISSING = object()


class _Spec(NamedTuple):
    name: str
    kind: str  # "option" or "argument"
    decls: tuple[str, ...]
    convert: Callable[[str], Any] | None  # None: a flag
    many: bool  # a repeatable option, or an argument taking every remaining word
    default: Any  # _MISSING: required
    envvar: str | None


def _spec(name: str, hint: Any, default: Any) -> _Spec | None:
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    base, *extras = typing.get_args(hint)
    params = [e for e in extras if isinstance(e, Param)]
    if len(params) != 1 or not set(params[0].settings) <= _SETTINGS:
        return None
    param = params[0]
    envvar = param.settings.get("envvar")
    if envvar is not None and not isinstance(envvar, str):
        return None
    if typing.get_origin(base) is typing.Union:  # Optional[X]
        inner = [a for a in typing.get_args(base) if a is not type(None)]
        if len(inner) != 1 or default is not None:
            return None
        base = inner[0]
    many = typing.get_origin(base) is list
    if many:
        (base,) = typing.get_args(base)
        if envvar is not None:  # click splits a repeatable option's variable on whitespace
            return None
    if base is bool and param.kind == "option" and not many and param.decls and default is False:
        if any("/" in d for d in param.decls) or envvar is not None:
            return None
        return _Spec(name, "option", param.decls, None, False, False, None)
    convert = _SCALARS.get(base)
    if convert is None or (param.kind == "option" and not param.decls) or (param.kind == "argument" and param.decls):
        return None
    return _Spec(name, param.kind, param.decls, convert, many, default, envvar)


def _specs(function: Callable[..., Any]) -> list[_Spec] | None:
    code = function.__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    defaults = dict(zip(names[code.co_argcount - len(function.__defaults__ or ()):code.co_argcount],
                        function.__defaults__ or (), strict=True))
    defaults.update(function.__kwdefaults__ or {})
    hints = typing.get_type_hints(function, include_extras=True)
    specs = [_spec(name, hints.get(name), defaults.get(name, _MISSING)) for name in names]
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

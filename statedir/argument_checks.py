"""The Python API's edge: every public method's arguments are checked against its type hints
before any work, so a wrong type is INVALID_VALUE naming the argument, never an AttributeError
from deep inside. (A refusal's words are its caller's where it is made: statedir.hints.)

The obvious forms are taken as what they mean: an int stage id (`sd.stage("r", 1, ...)`), a
`Path` (or any os.PathLike) where a file name goes, and one string where a list of names goes
(`names="paper_draft"`, never split into characters). Anything else of the wrong type is refused.

It is also where free text is capped: the CLI and the MCP server call these same methods, so one
limit (MAX_TEXT_BYTES a string, a list's every string) holds on every entry point, whatever the
operating system lets through argv.
"""
from __future__ import annotations

import functools
import os
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.errors import InvalidValue
from statedir.function_parameters import Parameters

# One free-text argument (a reason, a topic, a statement, a path): at most this many bytes of
# UTF-8. A log entry holds a few of them, so it stays far below what any reader accepts.
MAX_TEXT_BYTES = 64 * 1024
# One argument whole (a list, a mapping, their strings together): at most this many items and
# bytes, so no call grows a file without bound (2,000 outputs of 200 characters is refused).
MAX_ITEMS = 256
MAX_TOTAL_BYTES = 256 * 1024


def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, member) for member in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if hint is int or hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool) if hint is float else (
            isinstance(value, int) and not isinstance(value, bool))
    if hint is Path:
        return isinstance(value, Path)
    return isinstance(value, hint) if isinstance(hint, type) else True


# Arguments taking either a name (a template's, a bus session's) or a key's text, or else a file's
# path: one rule for each, read by the code that opens the file and by the MCP server that keeps
# every path inside the repository. Whatever is not a name is a path, blank or none.
_TEMPLATE_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"  # compiled on first use: most calls name no template
_KEY_TEXT = ("ssh-", "ecdsa-", "sk-")


def names_a_file(kind: str, value: str) -> bool:
    """Whether `value`, given where a `kind` goes ("template", "key" or "session"), is a file's path
    rather than a template's name, a public key's text or a session's id."""
    if kind == "template":
        return not (re.fullmatch(_TEMPLATE_NAME, value) and not value.endswith((".yaml", ".yml")))
    if kind == "key":
        return not value.lstrip().startswith(_KEY_TEXT)
    if kind == "session":
        return "/" in value or os.sep in value
    raise ValueError(f"no rule for a {kind}")


STAGE_ARGUMENTS = frozenset({"stage", "entry_point", "next", "group_stage"})  # ids that may be given as ints
FILE_ARGUMENTS = frozenset({"passport", "report", "bindings", "files", "template", "artifact_root", "directory"})


def _takes(hint: Any, kind: Any) -> bool:
    """`hint` accepts a value of `kind` (str, or list[str])."""
    if hint is kind or hint == kind:
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_takes(member, kind) for member in typing.get_args(hint))
    return False


def _one(name: str, value: Any, hint: Any) -> Any:
    """One value in the obvious form its hint means, or as it came (then checked)."""
    if name in STAGE_ARGUMENTS and isinstance(value, int) and not isinstance(value, bool) and _takes(hint, str):
        return str(value)
    if name in FILE_ARGUMENTS and isinstance(value, os.PathLike) and not _fits(value, hint) and _takes(hint, str):
        return os.fspath(value)
    return value


def coerce(name: str, value: Any, hint: Any) -> Any:
    """The obvious forms: an int stage id -> its string, a Path -> its string where a file name
    goes, one string -> a list of that one string where a list of strings goes."""
    if isinstance(value, str | os.PathLike) and not _fits(value, hint) and _takes(hint, list[str]):
        return [_one(name, value, str)]
    if isinstance(value, list) and _takes(hint, list[str]):
        return [_one(name, v, str) for v in value]
    return _one(name, value, hint)


def _measure(value: Any, found: list[int]) -> None:
    """Add `value`'s items (of its lists and mappings, nested ones included) and the bytes of its
    strings to `found` ([items, bytes]), stopping once either is past its limit."""
    if isinstance(value, str):
        found[1] += len(value.encode("utf-8", "surrogatepass"))
    elif isinstance(value, list | tuple | dict):
        found[0] += len(value)
        for item in (x for pair in value.items() for x in pair) if isinstance(value, dict) else value:
            if found[0] > MAX_ITEMS or found[1] > MAX_TOTAL_BYTES:
                return
            _measure(item, found)


def check_size(function: str, name: str, value: Any, file: str | None = None) -> None:
    """INVALID_VALUE naming the argument and the limit where `value` (a list or a mapping, nested
    ones counted too) holds more than MAX_ITEMS items or MAX_TOTAL_BYTES bytes of text in all.
    `file`: the file the argument named, whose content `value` is (an observer report, a passport:
    what a file brings into the store is held to the bound of an argument given whole)."""
    if not isinstance(value, list | tuple | dict):
        return
    found = [0, 0]
    _measure(value, found)
    what = f"{name} (the file {file})" if file is not None else name
    extra = {"file": file} if file is not None else {}
    if found[0] > MAX_ITEMS:
        raise InvalidValue(f"{function}(): {what} holds more than {MAX_ITEMS} items (the limit of one argument)",
                           argument=name, limit=MAX_ITEMS, **extra)
    if found[1] > MAX_TOTAL_BYTES:
        raise InvalidValue(f"{function}(): {what} holds more than {MAX_TOTAL_BYTES} bytes of text in all (the "
                           "limit of one argument)", argument=name, limit=MAX_TOTAL_BYTES, **extra)


def check_text(function: str, name: str, value: Any) -> None:
    """INVALID_VALUE naming the argument and the limit where a string in `value` (a string or
    a list of them) is longer than MAX_TEXT_BYTES in UTF-8, or `value` as a whole is past
    MAX_ITEMS items or MAX_TOTAL_BYTES bytes (check_size)."""
    check_size(function, name, value)
    for text in value if isinstance(value, list) else [value]:
        if isinstance(text, str) and len(text) * 4 > MAX_TEXT_BYTES:  # cheap first: most text is short
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_TEXT_BYTES:
                advice = ("no such name or path is that long: pass the one meant" if _names_something(name)
                          else "shorten it (long content belongs in a file, not in an argument)")
                raise InvalidValue(f"{function}(): {name} is {size} bytes of text, more than the {MAX_TEXT_BYTES} "
                                   f"allowed; {advice}", argument=name, size=size, limit=MAX_TEXT_BYTES)


# Arguments that name something (an id, a field, a file, a value of a vocabulary), not free text:
# too long, they are mistaken, never content to move into a file.
_NAMING = frozenset({"path", "field", "stage", "status", "actor", "role", "expect", "template", "names", "files",
                     "file", "session", "cursor", "key", "upstream", "next", "response", "decision", "verdict",
                     "part", "material", "entry_point", "passport", "report", "bindings", "artifact_root", "hash",
                     "skill", "doi", "url", "since", "at", "format", "group_stage", "checkpoint"})


def _names_something(name: str) -> bool:
    return name in _NAMING or name.endswith("_id")


def _shown(hint: Any) -> str:
    text = str(hint).replace("typing.", "").replace("NoneType", "None").replace("pathlib.", "")
    return text.replace("<class '", "").replace("'>", "")


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    parameters = Parameters(function)

    @functools.cache
    def hints() -> dict[str, Any]:
        """The parameters' hints; one that names what only type checkers import is not checked."""
        out = {}
        annotations = parameters.annotations
        for name in (*parameters.names, *([parameters.extra] if parameters.extra else [])):
            if name not in annotations:
                continue
            annotation = annotations[name]
            if isinstance(annotation, str):
                try:  # what typing.get_type_hints does, one parameter at a time (this module's own source)
                    annotation = eval(annotation, function.__globals__)  # noqa: S307
                except NameError:
                    continue
            out[name] = annotation
        return out

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            named, rest = parameters.bind(args, kwargs)
        except TypeError as exc:
            raise InvalidValue(f"{function.__name__}(): {exc}") from None
        for name, value in list(named.items())[1:]:  # after self
            named[name] = _checked(function.__name__, name, value, hints().get(name))
        for key, item in rest.items():  # **filters: each one
            rest[key] = _checked(function.__name__, key, item, hints().get(parameters.extra))
        return function(**named, **rest)

    return checked


def _checked(function: str, name: str, value: Any, hint: Any) -> Any:
    """One argument in its obvious form, refused unless it fits its hint and the text cap."""
    if hint is not None:
        value = coerce(name, value, hint)
        if not _fits(value, hint):
            raise InvalidValue(f"{function}(): {name} must be {_shown(hint)}, not "
                               f"{type(value).__name__} {value!r:.60}", argument=name)
    check_text(function, name, value)
    return value


def checked(cls: type) -> type:
    """Class decorator: every public method checks its arguments at the edge."""
    for name, member in list(vars(cls).items()):
        if isinstance(member, types.FunctionType) and not name.startswith("_"):
            setattr(cls, name, _wrap(member))
    return cls

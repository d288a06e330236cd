"""The Python API's edge: every public method's arguments are checked against its type hints
before any work, so a wrong type is INVALID_VALUE naming the argument, as the CLI would say,
never an AttributeError from deep inside.

The obvious forms are taken as what they mean: an int stage id (`sd.stage("r", 1, ...)`), a
`Path` (or any os.PathLike) where a file name goes, and one string where a list of names goes
(`names="paper_draft"`, never split into characters). Anything else of the wrong type is refused.

It is also where free text is capped: the CLI and the MCP server call these same methods, so one
limit (MAX_TEXT_BYTES a string, a list's every string) holds on every entry point, whatever the
operating system lets through argv.
"""
from __future__ import annotations

import functools
import inspect
import os
import re
import types
import typing
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from statedir.errors import BAD_INPUT, REFUSED, InvalidValue, StatedirError

# Who is calling: the command line sets it, so a refusal names its flags (`--topic`); a Python
# caller reads the same refusal with the method's own argument names (`topic=`).
CLI_WORDING: ContextVar[bool] = ContextVar("statedir_cli_wording", default=False)
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b(?!-)")
# Flags whose method argument has another name (a repeatable flag is a list argument).
_ARGUMENT_OF_FLAG = {"file": "files", "output": "outputs", "issue": "issues", "upstream": "upstream",
                     "start-run": "start_run()", "query": "query()", "create-evidence": "create_evidence()"}

# One free-text argument (a reason, a topic, a statement, a path): at most this many bytes of
# UTF-8. A log entry holds a few of them, so it stays far below what any reader accepts.
MAX_TEXT_BYTES = 64 * 1024


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


def check_text(function: str, name: str, value: Any) -> None:
    """INVALID_VALUE naming the argument and the limit where a string in `value` (a string or
    a list of them) is longer than MAX_TEXT_BYTES in UTF-8."""
    for text in value if isinstance(value, list) else [value]:
        if isinstance(text, str) and len(text) * 4 > MAX_TEXT_BYTES:  # cheap first: most text is short
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_TEXT_BYTES:
                raise InvalidValue(f"{function}(): {name} is {size} bytes of text, more than the {MAX_TEXT_BYTES} "
                                   "allowed; store long content in a file and pass its path", argument=name,
                                   size=size, limit=MAX_TEXT_BYTES)


def _shown(hint: Any) -> str:
    text = str(hint).replace("typing.", "").replace("NoneType", "None").replace("pathlib.", "")
    return text.replace("<class '", "").replace("'>", "")


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(function)

    @functools.cache
    def hints() -> dict[str, Any]:
        """The parameters' hints; one that names what only type checkers import is not checked."""
        out = {}
        for name, parameter in signature.parameters.items():
            annotation = parameter.annotation
            if isinstance(annotation, str):
                try:  # what typing.get_type_hints does, one parameter at a time (this module's own source)
                    annotation = eval(annotation, function.__globals__)  # noqa: S307
                except NameError:
                    continue
            if annotation is not inspect.Parameter.empty:
                out[name] = annotation
        return out

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise InvalidValue(f"{function.__name__}(): {exc}") from None
        for name, value in list(bound.arguments.items())[1:]:  # after self
            if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:  # **filters: each one
                for key, item in value.items():
                    value[key] = _checked(function.__name__, key, item, hints().get(name))
            else:
                bound.arguments[name] = _checked(function.__name__, name, value, hints().get(name))
        try:
            return function(*bound.args, **bound.kwargs)
        except StatedirError as exc:
            if not CLI_WORDING.get():
                api_wording(exc)
            raise

    return checked


def api_wording(exc: StatedirError) -> None:
    """Reword a refusal for a Python caller: each `--flag` becomes the argument it is (`flag=`)."""
    def argument(match: re.Match[str]) -> str:
        flag = match[1]
        named = _ARGUMENT_OF_FLAG.get(flag, flag.replace("-", "_"))
        return named if named.endswith("()") else f"{named}="

    if exc.exit_code not in (REFUSED, BAD_INPUT):  # an environment error may quote a git command line
        return
    parts = exc.message.split("`")  # a command quoted whole (`statedir redo R S --reason R`) stays as it is
    worded = "`".join(part if n % 2 else _FLAG.sub(argument, part) for n, part in enumerate(parts))
    if worded != exc.message:
        exc.message = worded
        exc.args = (worded, *exc.args[1:])


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
        if inspect.isfunction(member) and not name.startswith("_"):
            setattr(cls, name, _wrap(member))
    return cls

"""A refusal's next step as data, worded by each entry point in its own vocabulary.

A lower layer never writes a command line into a message. It names the step as a `Hint` (the
command by its words, its arguments by the command's parameter names) and leaves a placeholder
where the step is said: `{hint}` (the first hint; `{hint:2}` the second), and `{opt:NAME}` for an
option of the command being run (`--file` on the command line, `file=` in Python, `file` over
MCP; `{opt:files}` is `material`'s repeatable `--file`, `files=` in Python):

    raise GitError("the merge driver is missing: run `{hint}`", hint=Hint("doctor", {"fix": True}))

The command line says `statedir doctor --fix`, a Python caller `sd.doctor(fix=True)`, an MCP agent
`doctor {fix: true}`. The entry point sets its `Words` in `WORDS` while it runs (a Python caller
sets nothing: the default is the Python API's), and a message is worded in the words current where
it is made (when first read: most refusals are caught unread), so what a layer reads back of it
(`exc.message`) is already in its caller's words; an entry point may word it again from the
template (`StatedirError.reword`). Imports nothing of statedir.
"""
from __future__ import annotations

import re
from contextvars import ContextVar

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (`statedir --version` loads nothing)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

# `{hint}`, `{hint:N}`, `{opt:NAME}`: compiled on first use (most messages name no step)
_PLACEHOLDER = r"\{(?:hint(?::([1-9]))?|opt:([a-z][a-z0-9_]*))\}"
_compiled: list[re.Pattern[str]] = []


class Placeholder(str):
    """A value the reader fills in (`NAME`, `ROLE...`): said as written at every entry point."""

    __slots__ = ()


class Hint:
    """A next step: `command` by its words (`"doctor"`, `"people add"`), `args` by the command's
    parameter names (True: a switch given; a list: each value; a Placeholder: the reader's)."""

    __slots__ = ("command", "args")

    def __init__(self, command: str, args: Mapping[str, Any] | None = None) -> None:
        self.command = command
        self.args: dict[str, Any] = dict(args or {})

    def as_json(self) -> dict[str, Any]:
        return {"command": self.command, "args": {k: v for k, v in self.args.items()}}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hint) and (self.command, self.args) == (other.command, other.args)

    def __hash__(self) -> int:
        return hash(self.command)

    def __repr__(self) -> str:
        return f"Hint({self.command!r}, {self.args!r})" if self.args else f"Hint({self.command!r})"


def hints_of(hint: Hint | Iterable[Hint] | None) -> tuple[Hint, ...]:
    """One hint, several or none, as a tuple."""
    if hint is None:
        return ()
    return (hint,) if isinstance(hint, Hint) else tuple(hint)


# The Python API's own names where they differ from the command line's: a repeatable option is a
# list argument, a command another method (`statedir people add` is `sd.add_person`).
ARGUMENT_OF_FLAG = {"entry-material": "entry_materials", "output": "outputs", "issue": "issues", "upstream": "upstream",
                    "start-run": "start_run()", "query": "query()", "create-evidence": "create_evidence()"}
FLAG_OF_OPTION = {"files": "file"}  # an option a message names by its Python name: material's repeatable --file
_METHODS = {"people add": "add_person", "people remove": "remove_person", "signers add": "add_signer",
            "signers remove": "remove_signer", "init": "statedir.init"}


class Words:
    """How an entry point says a step and an option. This one is the Python API's (the default):
    `sd.doctor(fix=True)`, `file=`."""

    def hint(self, hint: Hint) -> str:
        args = dict(hint.args)
        if hint.command.startswith("bus ") and "session" in args:  # a session's: `sd.bus('s').set(...)`
            method = f"bus({_python(args.pop('session'))}).{hint.command.removeprefix('bus ')}"
        else:
            method = _METHODS.get(hint.command, hint.command.replace(" ", "_").replace("-", "_"))
        given = ", ".join(f"{self.argument(name)}={_python(value)}" for name, value in args.items()
                          if value is not None)
        return f"{method if '.' in method and not method.startswith('bus(') else 'sd.' + method}({given})"

    def argument(self, name: str) -> str:
        named = ARGUMENT_OF_FLAG.get(name.replace("_", "-"), name)
        return named.removesuffix("()")

    def option(self, name: str) -> str:
        """An option of the command being run: `file=` (`start_run()` where it is a method)."""
        if name == "store":  # the command line's --store is the path a Python caller opens
            return "statedir.open()'s path"
        named = ARGUMENT_OF_FLAG.get(name.replace("_", "-"), name)
        return named if named.endswith("()") else f"{named}="

    def fill(self, template: str, hints: tuple[Hint, ...]) -> str:
        """`template` with its placeholders said in these words (one it has no hint for stays)."""
        if "{" not in template:
            return template
        if not _compiled:
            _compiled.append(re.compile(_PLACEHOLDER))

        def said(found: re.Match[str]) -> str:
            if found[2] is not None:
                return self.option(found[2])
            at = int(found[1] or 1) - 1
            return self.hint(hints[at]) if at < len(hints) else found[0]

        return _compiled[0].sub(said, template)


def _python(value: Any) -> str:
    if isinstance(value, Placeholder):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_python(v) for v in value) + "]"
    return repr(str(value)) if not isinstance(value, bool | int | float) else repr(value)


PYTHON = Words()
WORDS: ContextVar[Words] = ContextVar("statedir_words", default=PYTHON)


def said(template: str, *hints: Hint) -> str:
    """`template` (a warning, a line of advice) with its steps in the current entry point's words."""
    return WORDS.get().fill(template, hints)


def opt(name: str) -> str:
    """The placeholder naming option `name` of the command being run, for an f-string message."""
    return "{opt:" + name + "}"


HINT, HINT2 = "{hint}", "{hint:2}"  # the first and second hint's placeholders, for an f-string message

# The steps lower layers name most.
DOCTOR_FIX = Hint("doctor", {"fix": True})
SYNC_REPLAY = Hint("sync", {"replay": True})

"""MCP tools generated from the CLI's own click commands: names, input schemas, argv.
The CLI hands its command group over (statedir.mcp.calls.Host); nothing here imports it.

Nothing here is written twice: a tool is a command of the built CLI (a command of a sub-group
is `group_command`), its input schema is read off the command's click parameters, and a call's
arguments become the argv the CLI itself parses. This module does not import the MCP SDK.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer._click import types
from typer._click.core import Command, Parameter
from typer.core import TyperArgument as Argument
from typer.core import TyperGroup as Group

from statedir.errors import InvalidValue
from statedir.mcp import outputs
from statedir.mcp.catalog import READ_ONLY, Kind, kind_of
from statedir.mcp.wording import DESCRIPTIONS, Wording

# Commands that make no sense for a server holding one store open: the server itself, making a
# store, the throwaway demo, writing agent instructions into the user's files, the merge
# driver (git runs it, on git's temporary files) and the web view (a server of its own).
# `sync` is a tool: it writes (not read-only).
NOT_TOOLS = frozenset({"mcp", "init", "demo", "agents", "merge-driver", "serve"})
# Parameters the server fills in: its own store, and --json (results are always the JSON).
SERVED = frozenset({"store", "json", "help"})
# Options a person uses, never an agent: acknowledging a verify finding is a review's verdict
# (the `verify` tool stays read-only).
PERSON_ONLY = frozenset({("verify", "acknowledge"), ("verify", "reason"), ("verify", "actor")})
EXPECT = "expect"  # the command's --expect REV
EXPECT_HEAD = "expect_head"  # ... as the tool's argument
EXPECT_HEAD_SCHEMA = {"type": "string", "description": "The commit you last read: HEAD_MOVED if this run or session "
                      "changed since."}
COMMIT_ID = re.compile(r"^[0-9a-fA-F]{7,64}$")
_PYTHON: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float), "boolean": bool}
_TYPES = ((types.IntParamType, "integer"), (types.FloatParamType, "number"), (types.BoolParamType, "boolean"))


@dataclass(frozen=True)
class Tool:
    """One CLI command served as an MCP tool."""

    name: str
    path: tuple[str, ...]  # the words that name the command on the command line
    command: Command
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    @property
    def kind(self) -> Kind:
        """Its group, title and hints (statedir.mcp.catalog)."""
        return kind_of(self.name, self.path, self.read_only)

    @property
    def output_schema(self) -> dict[str, Any]:
        return outputs.schema_of(self.name)

    def argv(self, arguments: dict[str, Any], store: Path) -> list[str]:
        """The command line the CLI would be given for these arguments (options, then `--`,
        then the positionals, so a value starting with '-' is never read as an option).

        Bound by name, never by position: a positional left out never lets the next one take
        its place (a required one is refused; an optional one stands as its default), and every
        argument's problem is reported in one INVALID_VALUE."""
        known = self.input_schema["properties"]
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            raise InvalidValue(f"{self.name} takes no argument {', '.join(map(repr, unknown))}; "
                               f"it takes {', '.join(known) or 'none'}", unknown=unknown)
        options: list[str] = []
        positionals: list[str] = []
        left_out: list[Parameter] = []  # optional positionals not given, since the last one given
        problems: dict[str, str] = {}
        names = {p.name for p in self.command.params}
        if "store" in names:
            options += ["--store", str(store)]
        if "json" in names:
            options.append("--json")
        for param in self.command.params:
            name = param.name
            if name is None or name in SERVED:
                continue
            if name == EXPECT:
                value = arguments.get(EXPECT_HEAD)
                if value is not None and not (isinstance(value, str) and COMMIT_ID.match(value)):
                    problems[EXPECT_HEAD] = f"{EXPECT_HEAD} takes a commit id (7 to 64 hex digits), not {value!r}"
                elif value is not None:
                    options += [param.opts[0], value]
                continue
            value = arguments.get(name)
            problem = _problem(param, value)
            if problem:
                problems[name] = problem
            elif value is None or value == []:
                if isinstance(param, Argument):
                    left_out.append(param)
            elif isinstance(param, Argument):
                for skipped in left_out:
                    held = _held_place(skipped)
                    if held is None:
                        problems[skipped.name or ""] = (f"{skipped.name} is needed before {name} (it has no default "
                                                        f"to stand in its place)")
                    positionals += held or []
                positionals += _words(param, value)
                left_out = []
            elif getattr(param, "is_flag", False) and not getattr(param, "count", False):
                secondary: list[str] = getattr(param, "secondary_opts", None) or []  # --no-x of --x/--no-x
                options += [param.opts[0]] if value else secondary[:1]
            else:
                for text in _words(param, value):
                    options += [param.opts[0], text]
        if problems:
            more = {"arguments": list(problems)} if len(problems) > 1 else {}
            raise InvalidValue(f"{self.name}: {'; '.join(problems.values())}", argument=next(iter(problems)), **more)
        return [*self.path, *options, "--", *positionals]


def _many(param: Parameter) -> bool:
    return bool(param.multiple) or param.nargs == -1


def _kind(param: Parameter) -> str:
    if getattr(param, "is_flag", False) and not getattr(param, "count", False):
        return "boolean"
    return next((kind for cls, kind in _TYPES if isinstance(param.type, cls)), "string")


def _problem(param: Parameter, value: Any) -> str | None:
    """What is wrong with the JSON value given for a parameter (None: left out), if anything."""
    many = _many(param)
    if value is None or (many and value == []):
        return f"{param.name} is required{' (at least one value)' if many else ''}" if param.required else None
    if many and not isinstance(value, list):
        return f"{param.name} takes a list"
    kind = _kind(param)
    for item in value if many else [value]:
        if not isinstance(item, _PYTHON[kind]) or (kind in ("integer", "number") and isinstance(item, bool)):
            return f"{param.name} takes {'a list of ' if many else ''}{kind} values, not {item!r}"
    return None


def _words(param: Parameter, value: Any) -> list[str]:
    """A checked value as command-line words."""
    return [str(item).lower() if isinstance(item, bool) else str(item) for item in (value if _many(param) else [value])]


def _held_place(skipped: Parameter) -> list[str] | None:
    """The words standing for an optional positional left out before a given one, so the given
    one is not read in its place: none for a list (read as empty), else its default; None if it
    has no default to pass."""
    if _many(skipped):
        return []
    default = skipped.default
    if isinstance(default, (str, int, float)) and not isinstance(default, bool):
        return [str(default)]
    return None


def _schema(param: Parameter) -> dict[str, Any]:
    kind = _kind(param)
    one: dict[str, Any] = {"type": kind}
    choices = getattr(param.type, "choices", None)
    if choices:
        one["enum"] = [str(c) for c in choices]
    prop: dict[str, Any] = {"type": "array", "items": one} if _many(param) else dict(one)
    if _many(param) and param.required:
        prop["minItems"] = 1
    help_text = getattr(param, "help", None)
    if help_text:
        prop["description"] = help_text
    default = param.default
    # A default an environment variable can override (--actor: STATEDIR_ACTOR) is not stated.
    if default not in (None, False, (), []) and not callable(default) and kind != "boolean" and not param.envvar:
        prop["default"] = default if isinstance(default, (int, float, str)) else str(default)
    return prop


def _description(command: Command) -> str:
    """The first paragraph of the command's help: agents pay for every token."""
    text = (command.short_help or command.help or "").strip()
    return " ".join(text.split("\n\n")[0].split())


def tool_of(name: str, path: tuple[str, ...], command: Command) -> Tool:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in command.params:
        if param.name in SERVED or param.name is None or getattr(param, "hidden", False) or \
                (name, param.name) in PERSON_ONLY:
            continue
        if param.name == EXPECT:
            properties[EXPECT_HEAD] = dict(EXPECT_HEAD_SCHEMA)
            continue
        properties[param.name] = _schema(param)
        if param.required:
            required.append(param.name)
    writes = name not in READ_ONLY  # `log --actor` filters by actor: it does not act as one
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return Tool(name, path, command, _description(command), schema, read_only=not writes)


def worded(tool: Tool, wording: Wording) -> Tool:
    """The tool with its description and its arguments' in its own words (no flags, no `statedir X`)."""
    properties = {arg: {**prop, "description": wording.describe(prop["description"], tool.name)}
                  if "description" in prop else prop for arg, prop in tool.input_schema["properties"].items()}
    own = DESCRIPTIONS.get(tool.name, tool.description)
    return dataclasses.replace(tool, description=wording.describe(own, tool.name),
                               input_schema={**tool.input_schema, "properties": properties})


def wording_of(served: dict[str, Tool]) -> Wording:
    """The table translating the command line's words into these tools'."""
    return Wording({name: (tool.path, tool.command) for name, tool in served.items()})


def tools(root: Group) -> dict[str, Tool]:
    """Every command of the CLI as a tool, a sub-group's commands included, by tool name, each
    described in its own words."""
    out: dict[str, Tool] = {}

    def walk(group: Group, path: tuple[str, ...]) -> None:
        for word, command in sorted(group.commands.items()):
            if command.hidden or (not path and word in NOT_TOOLS):
                continue
            here = (*path, word)
            if isinstance(command, Group):
                walk(command, here)
            else:
                name = "_".join(here).replace("-", "_")
                out[name] = tool_of(name, here, command)

    walk(root, ())
    wording = wording_of(out)
    return {name: worded(tool, wording) for name, tool in out.items()}

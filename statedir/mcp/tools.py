"""MCP tools made from statedir's command table (statedir.commands.table): names, input
schemas, and a call's keyword arguments. The CLI hands its table over (statedir.mcp.host.Host);
nothing here imports it, nor typer or click.

Nothing here is written twice: a tool is a command of the table (a command of a sub-group is
`group_command`), its input schema is read off the command's parameters, and a call's arguments
become the keyword arguments of the API call the command names (statedir.api.documents). This module
does not import the MCP SDK.
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statedir.commands import help_text
from statedir.commands.table import Command, Parameter
from statedir.errors import InvalidValue
from statedir.mcp import outputs
from statedir.mcp.catalog import READ_ONLY, Kind, kind_of
from statedir.mcp.wording import DESCRIPTIONS, Wording

# Commands that make no sense for a server holding one store open: the server itself, making a
# store, the throwaway demo, writing agent instructions into the user's files, the merge
# driver (git runs it, on git's temporary files) and the web view (a server of its own).
# `sync` is a tool: it writes (not read-only).
NOT_TOOLS = frozenset({"mcp", "init", "demo", "agents", "merge-driver", "serve"})
# Groups none of whose commands is a tool: who may act (`people`) is the user's to say, never an agent's.
NOT_TOOL_GROUPS = frozenset({"people"})
# Parameters the server fills in: its own store, and --json (results are always the JSON).
SERVED = frozenset({"store", "json"})
# Options a person uses, never an agent: acknowledging a verify finding is a review's verdict
# (the `verify` tool stays read-only).
PERSON_ONLY = frozenset({("verify", "acknowledge"), ("verify", "reason"), ("verify", "actor")})
# Options the server's own process answers: a session's marker (reset-boundary entries) is the
# server's, one per process, as STATEDIR_SESSION or a fresh id gives it.
PROCESS_OWN = frozenset({("stage", "session"), ("resume", "session")})
# The command line's only: the role a person acts in (--actor NAME --role ROLE). A server acts in
# the roles it was started for (statedir.mcp.roles), never as a person.
CLI_ONLY = frozenset({"as_role"})
EXPECT = "expect"  # the command's --expect REV
EXPECT_HEAD = "expect_head"  # ... as the tool's argument
# Said once, in the server's instructions (every write takes it: ten times in the default list alone).
EXPECT_HEAD_SCHEMA = {"type": "string"}
COMMIT_ID = re.compile(r"^[0-9a-fA-F]{7,64}$")
_PYTHON: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float), "boolean": bool}
_TYPES: dict[Any, str] = {int: "integer", float: "number"}


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
        acts = any(param.name == "actor" for param in self.command.parameters)
        return kind_of(self.name, self.path, self.read_only, self.command.group, acts)

    @property
    def output_schema(self) -> dict[str, Any]:
        return outputs.schema_of(self.name)

    def keywords(self, arguments: dict[str, Any], store: Path) -> dict[str, Any]:
        """The keyword arguments of the command (its API call takes them) for these arguments: the
        served store, --json, and each parameter by its name (one left out stands as its default:
        a positional left out never shifts another); every argument's problem is reported in one
        INVALID_VALUE."""
        known = self.input_schema["properties"]
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            raise InvalidValue(f"{self.name} takes no argument {', '.join(map(repr, unknown))}; "
                               f"it takes {', '.join(known) or 'none'}", unknown=unknown)
        given: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for param in self.command.parameters:
            name = param.name
            if name in SERVED:
                given[name] = store if name == "store" else True
                continue
            if name == EXPECT:
                value = arguments.get(EXPECT_HEAD)
                if value is not None and not (isinstance(value, str) and COMMIT_ID.match(value)):
                    problems[EXPECT_HEAD] = f"{EXPECT_HEAD} takes a commit id (7 to 64 hex digits), not {value!r}"
                given[name] = value
                continue
            value = arguments.get(name)
            problem = _problem(param, value)
            if problem:
                problems[name] = problem
            elif value is None or value == []:
                given[name] = _left_out(param)
            else:
                given[name] = [_typed(param, item) for item in value] if param.many else _typed(param, value)
        if problems:
            more = {"arguments": list(problems)} if len(problems) > 1 else {}
            raise InvalidValue(f"{self.name}: {'; '.join(problems.values())}", argument=next(iter(problems)), **more)
        return given


def _kind(param: Parameter) -> str:
    if param.flag:
        return "boolean"
    return _TYPES.get(param.type, "string")


def _problem(param: Parameter, value: Any) -> str | None:
    """What is wrong with the JSON value given for a parameter (None: left out), if anything."""
    many = param.many
    if value is None or (many and value == []):
        return f"{param.name} is required{' (at least one value)' if many else ''}" if param.required else None
    if many and not isinstance(value, list):
        return f"{param.name} takes a list"
    kind = _kind(param)
    for item in value if many else [value]:
        if not isinstance(item, _PYTHON[kind]) or (kind in ("integer", "number") and isinstance(item, bool)):
            return f"{param.name} takes {'a list of ' if many else ''}{kind} values, not {item!r}"
        if param.choices and item not in param.choices:  # declared choices, as the command line holds to them
            return f"{param.name} takes one of {', '.join(param.choices)}, not {item!r}"
    return None


def _typed(param: Parameter, value: Any) -> Any:
    """A checked JSON value as the function takes it (a path as a Path, a whole number as a float)."""
    return param.type(value) if param.type in (Path, float) else value


def _left_out(param: Parameter) -> Any:
    """What stands for a parameter the call leaves out: its environment variable where set (as
    the command line reads it: STATEDIR_ACTOR), else its default."""
    from_env = os.environ.get(param.envvar) if param.envvar and not param.many else None
    if from_env and param.type is not None and not param.flag:
        try:
            return param.type(from_env)
        except ValueError:
            pass
    return param.default


def _schema(param: Parameter) -> dict[str, Any]:
    kind = _kind(param)
    one: dict[str, Any] = {"type": kind}
    if param.choices:
        one["enum"] = list(param.choices)
    prop: dict[str, Any] = {"type": "array", "items": one} if param.many else dict(one)
    if param.many and param.required:
        prop["minItems"] = 1
    if param.help:
        prop["description"] = param.help
    default = param.default
    # A default an environment variable can override (--actor: STATEDIR_ACTOR) is not stated.
    if not param.required and default not in (None, False, (), []) and kind != "boolean" and not param.envvar:
        prop["default"] = default if isinstance(default, (int, float, str)) else str(default)
    return prop


def tool_of(name: str, path: tuple[str, ...], command: Command) -> Tool:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in command.parameters:
        if param.name in SERVED or param.name in CLI_ONLY or param.hidden or (name, param.name) in PERSON_ONLY | PROCESS_OWN:
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
    # The first paragraph of the command's help: agents pay for every token.
    return Tool(name, path, command, help_text.summary(command), schema, read_only=not writes)


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


def tools(commands: Iterable[Command]) -> dict[str, Tool]:
    """Every command of the table as a tool, a sub-group's commands included, by tool name, each
    described in its own words."""
    out: dict[str, Tool] = {}
    for command in sorted(commands, key=lambda command: command.path):
        if command.hidden or command.path[0] in NOT_TOOL_GROUPS or (len(command.path) == 1
                                                                    and command.path[0] in NOT_TOOLS):
            continue
        name = "_".join(command.path).replace("-", "_")
        out[name] = tool_of(name, command.path, command)
    wording = wording_of(out)
    return {name: worded(tool, wording) for name, tool in out.items()}

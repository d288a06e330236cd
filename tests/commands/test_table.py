"""statedir.commands.table: each command's parameters read once off its function's hints, and
read as typer reads them (typer's commands, `direct` and the MCP tools are all made from it)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import pytest

from statedir.cli import registry
from statedir.commands.params import Argument, Option
from statedir.commands.table import MISSING, Command, parameters


def sample(run_id: Annotated[str, Argument(help="The run.")],
           names: Annotated[list[Path], Argument(help="Files.")],
           reason: Annotated[str, Option("--reason", help="Why.")],
           tag: Annotated[Optional[list[str]], Option("--tag")] = None,
           limit: Annotated[Optional[int], Option("--limit", metavar="N")] = None,
           history: Annotated[bool, Option("--history/--no-history")] = True,
           yes: Annotated[bool, Option("--yes", "-y")] = False,
           actor: Annotated[str, Option("--actor", envvar="STATEDIR_ACTOR", hidden=True)] = "me",
           colour: Annotated[Literal["red", "blue"], Option("--colour")] = "red",
           plain: str = "x") -> None:
    """Do a thing.

    More about it, for --help only.\f
    Not even for --help."""


def test_each_parameter_is_read_with_its_kind_flags_type_and_default() -> None:
    read = {p.name: p for p in parameters(sample)}
    assert list(read) == ["run_id", "names", "reason", "tag", "limit", "history", "yes", "actor", "colour", "plain"]
    shape = {name: (p.kind, p.flags, p.off_flags, p.type, p.many, p.required) for name, p in read.items()}
    assert shape == {
        "run_id": ("argument", (), (), str, False, True),
        "names": ("argument", (), (), Path, True, True),
        "reason": ("option", ("--reason",), (), str, False, True),
        "tag": ("option", ("--tag",), (), str, True, False),
        "limit": ("option", ("--limit",), (), int, False, False),
        "history": ("option", ("--history",), ("--no-history",), bool, False, False),
        "yes": ("option", ("--yes", "-y"), (), bool, False, False),
        "actor": ("option", ("--actor",), (), str, False, False),
        "colour": ("option", ("--colour",), (), str, False, False),
        "plain": ("option", ("--plain",), (), str, False, False),  # undeclared: as typer reads it
    }
    assert read["run_id"].default is MISSING and read["history"].default is True and read["tag"].default is None
    assert read["history"].flag and read["yes"].flag and not read["limit"].flag
    assert (read["actor"].envvar, read["actor"].hidden, read["reason"].envvar) == ("STATEDIR_ACTOR", True, None)
    assert (read["run_id"].metavar, read["limit"].metavar, read["reason"].metavar) == ("RUN_ID", "N", None)
    assert read["colour"].choices == ("red", "blue") and read["run_id"].help == "The run."
    assert read["plain"].declared is None and read["run_id"].declared is not None


def test_a_command_names_its_parameters_in_order() -> None:
    assert [p.name for p in Command(("thing",), sample).parameters][:2] == ["run_id", "names"]


def test_every_command_declares_each_parameter_with_statedirs_params() -> None:
    """The table reads only statedir's Option/Argument: a `typer.Option` left in a hint would
    reach neither the MCP tools nor direct with its flags and help."""
    commands = registry.command_table()
    paths = {command.path for command in commands}
    assert ("stage",) in paths and ("bus", "set") in paths and ("signers", "add") in paths and ("research",) in paths
    undeclared = [(command.path, p.name) for command in commands for p in command.parameters if p.declared is None]
    assert undeclared == []


def _click_params(command: Command) -> dict[str, Any]:
    """The parameters typer makes of the command (the CLI as it parses them)."""
    import typer.main

    app = registry.build([command.path[0]])
    found: Any = typer.main.get_command(app)
    for word in command.path:
        found = found.commands[word]
    return {p.name: p for p in found.params}


@pytest.mark.parametrize("command", registry.command_table(), ids=lambda c: " ".join(c.path))
def test_the_table_reads_each_parameter_as_typer_does(command: Command) -> None:
    """What the MCP tools take is what the command line takes: names, flags, kinds, counts, defaults."""
    theirs = _click_params(command)
    for ours in command.parameters:
        param = theirs[ours.name]
        assert ours.kind == param.param_type_name, ours
        if ours.kind == "option":
            assert (tuple(param.opts), tuple(param.secondary_opts)) == (ours.flags, ours.off_flags), ours
            assert bool(param.is_flag) == ours.flag and bool(param.multiple) == ours.many, ours
        else:
            assert (param.nargs == -1) == ours.many, ours
        assert param.required == ours.required, ours
        assert param.envvar == ours.envvar and bool(getattr(param, "hidden", False)) == ours.hidden, ours
        if not ours.required:
            assert param.default == ours.default or (param.default in ((), None) and ours.default in ((), None)), ours


def test_every_tool_command_names_an_api_call_taking_its_parameters() -> None:
    """The MCP server calls the API the table names for a command (statedir.api.documents), with the
    command's parameters but --store and --json: each such function takes exactly those."""
    from statedir.api import documents
    from statedir.mcp.served_tools import served

    by_path = {command.path: command for command in registry.command_table()}
    for tool in served(by_path.values()).values():
        function = documents.call(tool.command.call)
        code = function.__code__
        if code.co_flags & 0x08:  # research: every flag, the action's among them
            continue
        takes = set(code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount])
        given = {p.name for p in tool.command.parameters} - {"json"} - ({"store"} if tool.name != "init" else set())
        assert takes == given, (tool.name, takes ^ given)

"""The tool list is generated from statedir's command table: a sub-group and a command with many
flags included, read-only annotations consistent, arguments turned into the command function's
keyword arguments."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import pytest

from statedir.cli.registry import COMMANDS, SUBCOMMANDS, command_table
from statedir.commands.params import Argument, Option
from statedir.commands.table import Command
from statedir.errors import InvalidValue
from statedir.mcp import tools as tools_mod
from statedir.mcp.tools import CLI_ONLY, EXPECT_HEAD, NOT_TOOL_GROUPS, NOT_TOOLS, PERSON_ONLY, PROCESS_OWN, READ_ONLY, tools


def test_every_cli_command_is_a_tool_with_its_parameters() -> None:
    served = tools(command_table())
    grouped = {f"{group}_{word}" for group, words in SUBCOMMANDS.items() for word in words if group not in NOT_TOOL_GROUPS}
    assert set(served) == {name for name in COMMANDS if name not in NOT_TOOLS} | grouped
    for name, tool in served.items():
        parameters = tool.command.parameters
        params = {p.name for p in parameters} - {"store", "json"} - CLI_ONLY - {o for c, o in PERSON_ONLY | PROCESS_OWN
                                                                               if c == name}
        schema = tool.input_schema
        assert set(schema["properties"]) == {EXPECT_HEAD if p == "expect" else p for p in params}, name
        assert set(schema.get("required", [])) == {p.name for p in parameters if p.required}, name
        assert schema["additionalProperties"] is False
        assert tool.description and "\n" not in tool.description and len(tool.description) < 160, name


def test_read_only_tools_are_exactly_those_that_cannot_write() -> None:
    served = tools(command_table())
    for name, tool in served.items():
        takes_actor = "actor" in tool.input_schema["properties"]
        acts = takes_actor and name != "log"  # log's --actor filters the trail
        assert not (acts and tool.read_only), f"{name} takes --actor (a transition) but is read-only"
        assert tool.read_only == (name in READ_ONLY), name
        # every write takes --expect REV, served as `expect_head`
        assert (EXPECT_HEAD in tool.input_schema["properties"]) == (not tool.read_only), name
        assert any(p.name == "expect" for p in tool.command.parameters) == (not tool.read_only), name
    assert served["show"].read_only and served["status"].read_only and not served["stage"].read_only


def test_typed_parameters_have_json_types() -> None:
    served = tools(command_table())
    props = served["integrity"].input_schema["properties"]
    assert props["refs_total"]["type"] == "integer"
    assert props["issue"] == {"type": "array", "items": {"type": "string"},
                              "description": "SEVERITY:TYPE:DESCRIPTION."}
    assert served["new"].input_schema["properties"]["confirm_skip"]["type"] == "boolean"
    assert served["validate"].input_schema["properties"]["files"]["type"] == "array"


def _other_branch_table() -> list[Command]:
    """Commands shaped like those landing on other branches: a `bus` sub-group and a
    `research` command with many flags of every kind (each records what it was called with)."""
    def bus_get(session: Annotated[str, Argument(help="The session.")],
                field: Annotated[Optional[str], Argument(help="A field.")] = None,
                store: Annotated[Optional[Path], Option("--store")] = None) -> Any:
        """Read a session or one field."""
        return ("get", session, field, store)

    def bus_append(session: Annotated[str, Argument()], field: Annotated[str, Argument()],
                   value: Annotated[str, Argument()],
                   actor: Annotated[str, Option("--actor", help="Who.")] = "x") -> Any:
        """Append to a list field."""
        return ("append", session, field, value, actor)

    def research(start_run: Annotated[bool, Option("--start-run", help="Start a run.")] = False,
                 skill: Annotated[Optional[str], Option("--skill", help="The skill.")] = None,
                 question: Annotated[Optional[str], Option("--question")] = None,
                 limit: Annotated[int, Option("--limit", help="At most.")] = 10,
                 confidence: Annotated[Optional[float], Option("--confidence")] = None,
                 tag: Annotated[Optional[list[str]], Option("--tag")] = None,
                 verbose: Annotated[bool, Option("--verbose/--quiet")] = False,
                 json: Annotated[bool, Option("--json")] = False) -> Any:
        """Research ledger actions.

        Long explanation an agent does not pay for.
        """
        return (start_run, skill, question, limit, confidence, tag, verbose, json)

    return [Command(("bus", "get"), bus_get), Command(("bus", "append"), bus_append), Command(("research",), research)]


def _call(tool: Any, arguments: dict[str, Any], store: Path = Path("/s")) -> Any:
    return tool.command.function(**tool.keywords(arguments, store))


def test_a_sub_group_and_a_many_flag_command_become_tools() -> None:
    served = tools(_other_branch_table())
    assert set(served) == {"bus_get", "bus_append", "research"}
    assert served["bus_get"].read_only and not served["bus_append"].read_only
    assert served["research"].description == "Research ledger actions."
    props = served["research"].input_schema["properties"]
    assert {k: v["type"] for k, v in props.items()} == {
        "start_run": "boolean", "skill": "string", "question": "string", "limit": "integer",
        "confidence": "number", "tag": "array", "verbose": "boolean"}  # no --expect: no expect_head
    assert props["limit"]["default"] == 10

    called = _call(served["research"], {"start_run": True, "skill": "-dash", "limit": 3, "confidence": 1,
                                        "tag": ["a", "b"], "verbose": False})
    assert called == (True, "-dash", None, 3, 1.0, ["a", "b"], False, True)
    assert isinstance(called[4], float)  # a whole number given for a float: the float
    assert _call(served["research"], {}) == (False, None, None, 10, None, None, False, True)  # the defaults
    assert _call(served["bus_get"], {"session": "-s1", "field": "f"}, Path("/store")) == (
        "get", "-s1", "f", Path("/store"))
    assert _call(served["bus_append"], {"session": "s", "field": "f", "value": "--v", "actor": "me"}) == (
        "append", "s", "f", "--v", "me")


def test_declared_choices_are_an_enum_and_a_value_outside_them_is_refused() -> None:
    def paint(colour: Annotated[Literal["red", "blue"], Option("--colour", help="The colour.")] = "red") -> Any:
        """Paint."""
        return colour

    tool = tools([Command(("paint",), paint)])["paint"]
    assert tool.input_schema["properties"]["colour"] == {"type": "string", "enum": ["red", "blue"],
                                                          "description": "The colour.", "default": "red"}
    assert _call(tool, {"colour": "blue"}) == "blue" and _call(tool, {}) == "red"
    with pytest.raises(InvalidValue) as caught:
        tool.keywords({"colour": "green"}, Path("/s"))
    assert caught.value.message == "paint: colour takes one of red, blue, not 'green'"


def test_a_left_out_option_with_an_environment_variable_takes_it_as_the_command_line_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    stage = tools(command_table())["stage"]
    arguments = {"run_id": "r1", "stage": "1", "status": "in_progress"}
    assert stage.keywords(arguments, Path("/s"))["actor"] == "pipeline_orchestrator"
    monkeypatch.setenv("STATEDIR_ACTOR", "observer")
    assert stage.keywords(arguments, Path("/s"))["actor"] == "observer"
    assert stage.keywords({**arguments, "actor": "me"}, Path("/s"))["actor"] == "me"
    assert stage.keywords(arguments, Path("/s"))["store"] == Path("/s")


@pytest.mark.parametrize("arguments, words", [
    ({"run_id": "r", "nope": 1}, "takes no argument 'nope'"),
    ({"run_id": 3}, "run_id takes string values"),
    ({"run_id": "r", "refs_total": True}, "refs_total takes integer values"),
    ({"run_id": "r", "issue": "x"}, "issue takes a list"),
    ({"run_id": "r", "issue": [1]}, "takes a list of string values"),
])
def test_arguments_of_the_wrong_shape_are_invalid_values(arguments: dict, words: str) -> None:
    tool = tools(command_table())["integrity"]
    with pytest.raises(InvalidValue) as caught:
        tool.keywords(arguments, Path("/s"))
    assert words in caught.value.message


@pytest.mark.parametrize("name, arguments, missing", [
    ("bus_set", {"session": "2026-06-30-s", "value": "owner"}, "field"),  # was: owner = ""
    ("bus_append", {"session": "2026-06-30-s", "field": None, "value": "new-item"}, "field"),
    ("diff", {"run_id": "r1", "start": None, "end": "HEAD~1"}, "start"),  # was: HEAD~1 as the start
    ("set", {"run_id": None, "field": "topic", "value": "x", "reason": "r"}, "run_id"),
    ("material", {"run_id": "r1", "names": []}, "names"),
    ("integrity", {"run_id": "r1", "stage": "2.5", "verdict": "PASS", "refs_verified": 1}, "refs_total"),
])
def test_a_required_argument_left_out_or_null_is_refused_by_its_name(name: str, arguments: dict, missing: str) -> None:
    with pytest.raises(InvalidValue) as caught:
        tools(command_table())[name].keywords(arguments, Path("/s"))
    assert caught.value.details == {"argument": missing}
    assert caught.value.message.startswith(f"{name}: {missing} is required")


def test_every_problem_of_a_call_is_reported_at_once() -> None:
    with pytest.raises(InvalidValue) as caught:
        tools(command_table())["integrity"].keywords({"stage": 2, "issue": "x"}, Path("/s"))
    assert caught.value.details == {"argument": "run_id", "arguments": [
        "run_id", "stage", "verdict", "refs_total", "refs_verified", "issue"]}
    assert caught.value.message == ("integrity: run_id is required; stage takes string values, not 2; verdict is "
                                    "required; refs_total is required; refs_verified is required; issue takes a list")


def test_schemas_require_what_is_required_and_allow_no_null() -> None:
    for name, tool in tools(command_table()).items():
        schema = tool.input_schema
        for arg, prop in schema["properties"].items():
            assert prop["type"] in ("string", "integer", "number", "boolean", "array"), (name, arg)  # never null
            if prop["type"] == "array":
                assert prop["items"]["type"] != "null" and (prop.get("minItems") == 1) == (
                    arg in schema.get("required", [])), (name, arg)
    assert tools(command_table())["material"].input_schema["properties"]["names"]["minItems"] == 1


def _positionals_table() -> list[Command]:
    """Optional positionals before a given one: one with a default, one without, a list."""
    def span(run_id: Annotated[str, Argument()], start: Annotated[str, Argument()] = "HEAD~1",
             end: Annotated[Optional[str], Argument()] = None) -> Any:
        return ("span", run_id, start, end)

    def pair(first: Annotated[Optional[str], Argument()] = None,
             second: Annotated[Optional[str], Argument()] = None) -> Any:
        return ("pair", first, second)

    def files(names: Annotated[Optional[list[str]], Argument()] = None,
              last: Annotated[Optional[str], Argument()] = None) -> Any:
        return ("files", names, last)

    return [Command((function.__name__,), function) for function in (span, pair, files)]


def test_an_optional_positional_left_out_never_takes_the_next_value() -> None:
    """Bound by name: whatever is left out stands as its default, and nothing shifts."""
    served = tools(_positionals_table())
    for arguments in ({"run_id": "r", "end": "HEAD"}, {"run_id": "r", "start": None, "end": "HEAD"}):
        assert _call(served["span"], arguments) == ("span", "r", "HEAD~1", "HEAD")  # the default
    assert _call(served["span"], {"run_id": "r"}) == ("span", "r", "HEAD~1", None)
    assert _call(served["files"], {"last": "z"}) == ("files", None, "z")
    assert _call(served["files"], {"names": [], "last": "z"}) == ("files", None, "z")
    assert _call(served["pair"], {"first": "a", "second": "b"}) == ("pair", "a", "b")
    assert _call(served["pair"], {"first": None, "second": "b"}) == ("pair", None, "b")  # not shifted into first


@pytest.mark.usefixtures("isolated")
def test_the_generator_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = ("import sys; import statedir.cli; from statedir.cli.registry import command_table; "
            "from statedir.mcp import tools, calls; tools.tools(command_table()); "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert tools_mod.__doc__ and "does not import the MCP SDK" in tools_mod.__doc__


@pytest.mark.usefixtures("isolated")
def test_the_server_calls_commands_without_typer(tmp_path: Path) -> None:
    """The command table drives the tools and their calls: a call (a write, a refusal of the
    research ledger's) loads neither typer nor click."""
    import subprocess
    import sys

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code = ("import sys; from pathlib import Path; from statedir import api; "
            "from statedir.cli.registry import command_table; from statedir.mcp.host import mcp_host; "
            "from statedir.mcp.calls import Served; "
            f"api.init(Path({str(tmp_path)!r}) / 'state'); "
            f"served = Served(Path({str(tmp_path)!r}) / 'state', mcp_host(command_table())); "
            "assert not served.call('new', {'run_id': 'r1', 'topic': 'T'}).is_error; "
            "assert served.call('research_complete_run', {'run_id': 'x', 'status': 'completed'}).is_error; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

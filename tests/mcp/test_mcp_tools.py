"""The tool list is generated from the CLI's own click commands: a sub-group and a command with
many flags included, read-only annotations consistent, arguments turned into the CLI's argv."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import pytest
import typer
import typer.main

from statedir.cli.registry import COMMANDS, GROUPS
from statedir.cli.registry import command_group as cli_group
from statedir.errors import InvalidValue
from statedir.mcp import tools as tools_mod
from statedir.mcp.tools import EXPECT_HEAD, NOT_TOOLS, PERSON_ONLY, READ_ONLY, tools


def test_every_cli_command_is_a_tool_with_its_parameters() -> None:
    group = cli_group()
    served = tools(group)
    subs = {g: sub if isinstance(sub, typer.Typer) else sub() for g, (sub, _) in GROUPS.items()}
    grouped = {f"{g}_{c}" for g, sub in subs.items() for c in typer.main.get_group(sub).commands}
    assert set(served) == {name for name in COMMANDS if name not in NOT_TOOLS} | grouped
    for name, tool in served.items():
        command = tool.command
        params = {p.name for p in command.params} - {"store", "json", "help"} - {o for c, o in PERSON_ONLY if c == name}
        schema = tool.input_schema
        assert set(schema["properties"]) == {EXPECT_HEAD if p == "expect" else p for p in params}, name
        assert set(schema.get("required", [])) == {p.name for p in command.params if p.required}, name
        assert schema["additionalProperties"] is False
        assert tool.description and "\n" not in tool.description and len(tool.description) < 160, name


def test_read_only_tools_are_exactly_those_that_cannot_write() -> None:
    served = tools(cli_group())
    for name, tool in served.items():
        takes_actor = "actor" in tool.input_schema["properties"]
        acts = takes_actor and name != "log"  # log's --actor filters the trail
        assert not (acts and tool.read_only), f"{name} takes --actor (a transition) but is read-only"
        assert tool.read_only == (name in READ_ONLY), name
        # every write takes --expect REV, served as `expect_head`
        assert (EXPECT_HEAD in tool.input_schema["properties"]) == (not tool.read_only), name
        assert any(p.name == "expect" for p in tool.command.params) == (not tool.read_only), name
    assert served["show"].read_only and served["status"].read_only and not served["stage"].read_only


def test_typed_parameters_have_json_types() -> None:
    served = tools(cli_group())
    props = served["integrity"].input_schema["properties"]
    assert props["refs_total"]["type"] == "integer"
    assert props["issue"] == {"type": "array", "items": {"type": "string"},
                              "description": "SEVERITY:TYPE:DESCRIPTION."}
    assert served["new"].input_schema["properties"]["confirm_skip"]["type"] == "boolean"
    assert served["validate"].input_schema["properties"]["files"]["type"] == "array"


def _other_branch_cli() -> typer.Typer:
    """Commands shaped like those landing on other branches: a `bus` sub-group and a
    `research` command with many flags of every kind."""
    app = typer.Typer()
    bus = typer.Typer(help="The handoff bus.")

    @bus.command("get")
    def bus_get(session: Annotated[str, typer.Argument(help="The session.")],
                field: Annotated[Optional[str], typer.Argument(help="A field.")] = None,
                store: Optional[Path] = typer.Option(None, "--store")) -> None:
        """Read a session or one field."""
        print(f"get {session} {field}")

    @bus.command("append")
    def bus_append(session: str, field: str, value: str,
                   actor: Annotated[str, typer.Option("--actor", help="Who.")] = "x") -> None:
        """Append to a list field."""
        print(f"append {session} {field} {value} {actor}")

    @app.command()
    def research(start_run: Annotated[bool, typer.Option("--start-run", help="Start a run.")] = False,
                 skill: Annotated[Optional[str], typer.Option("--skill", help="The skill.")] = None,
                 question: Annotated[Optional[str], typer.Option("--question")] = None,
                 limit: Annotated[int, typer.Option("--limit", help="At most.")] = 10,
                 confidence: Annotated[Optional[float], typer.Option("--confidence")] = None,
                 tag: Annotated[Optional[list[str]], typer.Option("--tag")] = None,
                 verbose: Annotated[bool, typer.Option("--verbose/--quiet")] = False,
                 json: Annotated[bool, typer.Option("--json")] = False) -> None:
        """Research ledger actions.

        Long explanation an agent does not pay for.
        """
        print(repr((start_run, skill, question, limit, confidence, tag, verbose, json)))

    app.add_typer(bus, name="bus")
    return app


def _run(group: object, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with group.make_context("statedir", argv) as ctx:  # type: ignore[attr-defined]
        group.invoke(ctx)  # type: ignore[attr-defined]
    return capsys.readouterr().out.strip()


def test_a_sub_group_and_a_many_flag_command_become_tools(capsys: pytest.CaptureFixture[str]) -> None:
    group = typer.main.get_command(_other_branch_cli())
    served = tools(group)  # type: ignore[arg-type]
    assert set(served) == {"bus_get", "bus_append", "research"}
    assert served["bus_get"].read_only and not served["bus_append"].read_only
    assert served["research"].description == "Research ledger actions."
    props = served["research"].input_schema["properties"]
    assert {k: v["type"] for k, v in props.items()} == {
        "start_run": "boolean", "skill": "string", "question": "string", "limit": "integer",
        "confidence": "number", "tag": "array", "verbose": "boolean"}  # no --expect: no expect_head
    assert props["limit"]["default"] == 10

    argv = served["research"].argv({"start_run": True, "skill": "-dash", "limit": 3, "confidence": 0.5,
                                    "tag": ["a", "b"], "verbose": False}, Path("/s"))
    assert _run(group, argv, capsys) == repr((True, "-dash", None, 3, 0.5, ["a", "b"], False, True))
    argv = served["bus_get"].argv({"session": "-s1", "field": "f"}, Path("/store"))
    assert argv[:2] == ["bus", "get"] and argv[2:4] == ["--store", "/store"]
    assert _run(group, argv, capsys) == "get -s1 f"
    argv = served["bus_append"].argv({"session": "s", "field": "f", "value": "--v", "actor": "me"}, Path("/s"))
    assert _run(group, argv, capsys) == "append s f --v me"


@pytest.mark.parametrize("arguments, words", [
    ({"run_id": "r", "nope": 1}, "takes no argument 'nope'"),
    ({"run_id": 3}, "run_id takes string values"),
    ({"run_id": "r", "refs_total": True}, "refs_total takes integer values"),
    ({"run_id": "r", "issue": "x"}, "issue takes a list"),
    ({"run_id": "r", "issue": [1]}, "takes a list of string values"),
])
def test_arguments_of_the_wrong_shape_are_invalid_values(arguments: dict, words: str) -> None:
    tool = tools(cli_group())["integrity"]
    with pytest.raises(InvalidValue) as caught:
        tool.argv(arguments, Path("/s"))
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
        tools(cli_group())[name].argv(arguments, Path("/s"))
    assert caught.value.details == {"argument": missing}
    assert caught.value.message.startswith(f"{name}: {missing} is required")


def test_every_problem_of_a_call_is_reported_at_once() -> None:
    with pytest.raises(InvalidValue) as caught:
        tools(cli_group())["integrity"].argv({"stage": 2, "issue": "x"}, Path("/s"))
    assert caught.value.details == {"argument": "run_id", "arguments": [
        "run_id", "stage", "verdict", "refs_total", "refs_verified", "issue"]}
    assert caught.value.message == ("integrity: run_id is required; stage takes string values, not 2; verdict is "
                                    "required; refs_total is required; refs_verified is required; issue takes a list")


def test_schemas_require_what_is_required_and_allow_no_null() -> None:
    for name, tool in tools(cli_group()).items():
        schema = tool.input_schema
        for arg, prop in schema["properties"].items():
            assert prop["type"] in ("string", "integer", "number", "boolean", "array"), (name, arg)  # never null
            if prop["type"] == "array":
                assert prop["items"]["type"] != "null" and (prop.get("minItems") == 1) == (
                    arg in schema.get("required", [])), (name, arg)
    assert tools(cli_group())["material"].input_schema["properties"]["names"]["minItems"] == 1


def _positionals_cli() -> typer.Typer:
    """Optional positionals before a given one: one with a default, one without, a list."""
    app = typer.Typer()

    @app.command()
    def span(run_id: str, start: Annotated[str, typer.Argument()] = "HEAD~1",
             end: Annotated[Optional[str], typer.Argument()] = None) -> None:
        print(f"span {run_id} {start} {end}")

    @app.command()
    def pair(first: Annotated[Optional[str], typer.Argument()] = None,
             second: Annotated[Optional[str], typer.Argument()] = None) -> None:
        print(f"pair {first} {second}")

    @app.command()
    def files(names: Annotated[Optional[list[str]], typer.Argument()] = None,
              last: Annotated[Optional[str], typer.Argument()] = None) -> None:
        print(f"files {names} {last}")

    return app


def test_an_optional_positional_left_out_never_takes_the_next_value(capsys: pytest.CaptureFixture[str]) -> None:
    group = typer.main.get_command(_positionals_cli())
    served = tools(group)  # type: ignore[arg-type]
    for arguments in ({"run_id": "r", "end": "HEAD"}, {"run_id": "r", "start": None, "end": "HEAD"}):
        assert _run(group, served["span"].argv(arguments, Path("/s")), capsys) == "span r HEAD~1 HEAD"  # the default
    assert _run(group, served["span"].argv({"run_id": "r"}, Path("/s")), capsys) == "span r HEAD~1 None"
    assert _run(group, served["files"].argv({"last": "z"}, Path("/s")), capsys) == "files None z"
    assert _run(group, served["pair"].argv({"first": "a", "second": "b"}, Path("/s")), capsys) == "pair a b"
    with pytest.raises(InvalidValue) as caught:  # no default to stand for `first`: refused, not shifted
        served["pair"].argv({"first": None, "second": "b"}, Path("/s"))
    assert caught.value.details == {"argument": "first"} and "first is needed before second" in caught.value.message


def test_the_generator_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = ("import sys; import statedir.cli; from statedir.cli.registry import command_group; "
            "from statedir.mcp import tools, calls; tools.tools(command_group()); "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert tools_mod.__doc__ and "does not import the MCP SDK" in tools_mod.__doc__

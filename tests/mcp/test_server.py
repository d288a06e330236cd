"""The MCP server in-process, through the SDK's own client: tools, results identical to the CLI's
--json, errors carrying statedir's codes, compare-and-swap on HEAD, concurrent clients."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Annotated

import anyio
import pytest

from statedir import api
from statedir.cli.registry import command_table
from statedir.commands.document import Document
from statedir.commands.params import Argument, Option
from statedir.commands.table import Command, Exit
from statedir.gitops import git
from statedir.mcp.calls import Served
from statedir.mcp.host import mcp_host
from tests.support.mcp_session import AGENT_ROLES, Agent, ToolError, agent, document
from tests.support.util import cli, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one, not made by init again)."""
    return repo / "state"


def commits(repo: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True,
                              check=True).stdout)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_are_listed_with_schemas_and_read_only_annotations(store: Path, mode: str) -> None:
    async def main() -> None:
        async with agent(store, mode) as a:
            listed = {t.name: t for t in (await a.client.list_tools()).tools}
            assert {"new", "stage", "confirm", "show", "status", "log", "validate"} <= set(listed)
            assert "mcp" not in listed and "demo" not in listed and "research" not in listed
            assert "init" in listed and "research_start_run" in listed
            assert listed["show"].annotations.read_only_hint is True
            assert not listed["stage"].annotations.read_only_hint  # left out: the protocol's default, false
            assert listed["stage"].input_schema["required"] == ["run_id", "stage", "status"]
            assert "expect_head" in listed["stage"].input_schema["properties"]
            assert "expect_head" not in listed["show"].input_schema["properties"]
            assert all(t.description for t in listed.values())
            assert await a("new", run_id="r1", topic="T")  # the JSON-RPC framing works in both modes
    anyio.run(main)


@pytest.mark.slow  # every tool's result against the CLI's, a CLI process each
def test_results_are_the_json_the_cli_prints(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            made = await a("new", run_id="r1", topic="AI and QA")
            assert set(made) >= {"run_id", "commit", "summary"} and made["commit"] == git.head(repo) == a.head
            await a("stage", run_id="r1", stage="1", status="in_progress", mode="socratic")
            for name, arguments, argv in [
                    ("show", {"run_id": "r1", "whole": True}, ["r1", "--no-history"]),
                    ("show", {"run_id": "r1", "history": True}, ["r1"]),
                    ("show", {"run_id": "r1", "format": "ars"}, ["r1", "--format", "ars", "--no-history"]),
                    ("get", {"run_id": "r1", "path": "stages.1.status"}, ["r1", "stages.1.status"]),
                    ("status", {"run_id": "r1"}, ["r1"]), ("runs", {}, []),
                    ("log", {"run_id": "r1"}, ["r1", "--cursor", "start", "--limit", "50"]),
                    ("prereq", {"run_id": "r1", "stage": "3"}, ["r1", "3"]), ("validate", {}, []),
                    ("graph", {"run_id": "r1", "format": "dot"}, ["r1", "--format", "dot"])]:
                result = await a.raw(name, **arguments)
                expected = cli(name, *argv, "--store", str(store), "--json").stdout.strip()
                assert document(result) == json.loads(expected), name  # sent once: the structured content
                assert result.is_error is False, name  # prereq not met is an answer, not a failure
    anyio.run(main)


def test_each_write_is_one_commit_and_a_refusal_changes_nothing(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            await a("new", run_id="r1", topic="T")
            before = commits(repo)
            await a("stage", run_id="r1", stage="1", status="in_progress", output=["RQ Brief"])
            assert commits(repo) == before + 1
            assert await a("get", run_id="r1", path="stages.1.outputs") == ["RQ Brief"]
            saved = snapshot(repo)
            cases = [("confirm", {"run_id": "r1", "next": "3"}, "ILLEGAL_TRANSITION"),
                     ("stage", {"run_id": "nope", "stage": "1", "status": "completed"}, "UNKNOWN_RUN"),
                     ("stage", {"run_id": "../x", "stage": "1", "status": "completed"}, "INVALID_ID"),
                     ("stage", {"run_id": "r1", "stage": "9", "status": "completed"}, "UNKNOWN_STAGE"),
                     ("integrity", {"run_id": "r1", "stage": "2.5", "verdict": "PASS", "refs_total": 1,
                                    "refs_verified": 1}, "PERMISSION_DENIED"),
                     ("stage", {"run_id": "r1", "stage": 1, "status": "completed"}, "INVALID_VALUE"),
                     ("stage", {"run_id": "r1", "status": "completed"}, "INVALID_VALUE"),
                     ("no_such_tool", {}, "INVALID_VALUE")]
            for name, arguments, code in cases:
                with pytest.raises(ToolError) as caught:
                    await a(name, **arguments)
                assert caught.value.code == code, (name, arguments, caught.value.doc)
                assert set(caught.value.doc["error"]) == {"code", "message", "details"}
            assert snapshot(repo) == saved
    anyio.run(main)


def test_expect_head_refuses_a_write_only_where_its_run_changed(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            seen = (await a("new", run_id="r1", topic="T"))["commit"]
            await a("stage", run_id="r1", stage="1", status="in_progress", expect_head=seen[:12])
            saved = snapshot(repo)
            with pytest.raises(ToolError) as caught:  # `seen` is stale now: the run changed after it
                await a("stage", run_id="r1", stage="1", status="completed", output=["rq_brief"], expect_head=seen)
            assert caught.value.code == "HEAD_MOVED"
            assert caught.value.doc["error"]["details"] == {"expected": seen, "head": git.head(repo),
                                                            "changed": "runs/r1"}
            assert snapshot(repo) == saved
            # commits elsewhere never make it stale: the user's own, another run's, a bus write
            head = caught.value.doc["error"]["details"]["head"]
            (repo / "notes.txt").write_text("mine\n")
            subprocess.run(["git", "add", "notes.txt"], cwd=repo, check=True)
            subprocess.run(["git", "commit", "-qm", "user"], cwd=repo, check=True)
            await a("new", run_id="r2", topic="T")
            await a("bus_set", session="2026-06-30-s", field="phase", value="x")
            done = await a("stage", run_id="r1", stage="1", status="completed", output=["rq_brief"], expect_head=head)
            assert done["commit"] == git.head(repo)
    anyio.run(main)


def test_two_agents_racing_on_one_head_one_wins(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a, agent(store) as b:
            head = (await a("new", run_id="r1", topic="T"))["commit"]
            outcomes: dict[str, object] = {}

            async def write(name: str, who: Agent, turns: str) -> None:
                try:
                    outcomes[name] = await who("stage", run_id="r1", stage="1", status="in_progress", turns=turns,
                                               expect_head=head)
                except ToolError as exc:
                    outcomes[name] = exc.code

            async with anyio.create_task_group() as tg:
                tg.start_soon(write, "a", a, "#1..#2")
                tg.start_soon(write, "b", b, "#1..#3")
            assert sorted(map(type, outcomes.values()), key=str) == [dict, str]
            assert "HEAD_MOVED" in outcomes.values()
            assert commits(repo) == 3  # init, new, the one winner
    anyio.run(main)


def test_concurrent_calls_from_several_clients_all_land(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a, agent(store) as b:
            async def drive(who: Agent, run_id: str) -> None:
                await who("new", run_id=run_id, topic=run_id)
                await who("stage", run_id=run_id, stage="1", status="in_progress")
                await who("material", run_id=run_id, names=["rq_brief"])

            async with anyio.create_task_group() as tg:
                for n in range(3):
                    tg.start_soon(drive, a, f"a{n}")
                    tg.start_soon(drive, b, f"b{n}")
            assert commits(repo) == 1 + 6 * 3
            assert sorted(r["run_id"] for r in await a("runs")) == ["a0", "a1", "a2", "b0", "b1", "b2"]
            assert await b("validate") == {"valid": True, "errors": []}
    anyio.run(main)


def test_one_store_is_kept_open(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served = Served(store, mcp_host(command_table()))
    assert not served.call("runs", {}).is_error  # opened on the first call

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the store was opened again")

    monkeypatch.setattr(api.StateDir, "__init__", refuse)
    assert not served.call("new", {"run_id": "r1", "topic": "T"}).is_error
    assert not served.call("stage", {"run_id": "r1", "stage": "1", "status": "in_progress"}).is_error
    assert '"in_progress"' in served.call("get", {"run_id": "r1", "path": "stages.1.status"}).text


def test_a_repository_libgit2_cannot_open_is_served_through_git(tmp_path: Path) -> None:
    """libgit2 opens no SHA-256 repository: the server still starts, and commits through git."""
    repo = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "start"], cwd=repo, check=True)
    api.init(repo / "state")
    served = Served(repo / "state", mcp_host(command_table()))
    assert served.sd.store.objects is None
    assert not served.call("new", {"run_id": "r1", "topic": "T"}).is_error
    assert len(git.head(repo) or "") == 64 and commits(repo) == 3


def test_exit_codes_travel_in_meta_and_a_bare_failure_is_an_error(store: Path) -> None:
    from statedir.cli import render
    from statedir.mcp.server import EXIT_META
    from statedir.mcp.tools import tools

    async def main() -> None:
        async with agent(store) as a:
            await a("new", run_id="r1", topic="T")
            answer = await a.raw("prereq", run_id="r1", stage="3")
            assert (answer.is_error, answer.meta[EXIT_META]) == (False, 1)
            assert (await a.raw("status", run_id="r1")).meta[EXIT_META] == 0
            refused = await a.raw("confirm", run_id="r1", next="3")
            assert (refused.is_error, refused.meta[EXIT_META]) == (True, 1)
            for bad in ("abc", "zzzzzzzz", 7):
                with pytest.raises(ToolError) as caught:
                    await a("loop", run_id="r1", expect_head=bad)
                assert caught.value.code == "INVALID_VALUE"
    anyio.run(main)

    def quiet(session: Annotated[str, Argument()]) -> None:
        """Exits 1 printing nothing, as a missing bus session does."""
        raise Exit(1)

    def flat(session: Annotated[str, Argument()]) -> None:
        """Prints the research ledger's flat error."""
        render.say('{"error": "NOT_FOUND", "message": "no such run"}')
        raise Exit(2)

    served = Served(store, mcp_host(command_table()))
    served.tools = tools([Command(("quiet",), quiet, call=lambda sd, **kw: Document("", 1, plain=True)),
                          Command(("flat",), flat, call=lambda sd, **kw: Document(
                              {"error": "NOT_FOUND", "message": "no such run"}, 2))])
    bare = served.call("quiet", {"session": "s"})
    assert (bare.is_error, bare.exit_code, bare.text) == (True, 1, "")
    flat_error = served.call("flat", {"session": "s"})
    assert (flat_error.is_error, flat_error.exit_code) == (True, 2)


def test_a_value_of_the_wrong_type_is_named_by_the_tool_argument(store: Path) -> None:
    """A value the command cannot take is named as the tool's argument, not as the command
    line's --flag or METAVAR, and the command is not called."""
    from statedir.mcp.tools import tools

    called: list[int] = []

    def pick(colour: Annotated[str, Argument()],
             limit: Annotated[int, Option("--limit", metavar="N", help="At least 1.")] = 1) -> None:
        """Takes a limit."""
        called.append(limit)

    served = Served(store, mcp_host(command_table()))
    served.tools = tools([Command(("pick",), pick, call=lambda sd, **kw: Document(pick(kw["colour"], kw["limit"])))])
    refused = served.call("pick", {"colour": "red", "limit": "zero"})
    assert refused.is_error and refused.exit_code == 2
    error = json.loads(refused.text)["error"]
    assert error["code"] == "INVALID_VALUE" and error["details"] == {"argument": "limit"}
    assert "limit" in error["message"] and "--limit" not in error["message"] and not called
    assert not served.call("pick", {"colour": "red", "limit": 3}).is_error and called == [3]


def test_no_error_quotes_a_file_an_agent_names_that_is_not_a_key_or_yaml(store: Path, tmp_path: Path) -> None:
    """The tools take paths; the server may read files the agent may not (`signers_add x
    /etc/shadow`): the refusal says what the file is not, never what it holds."""
    secret = store.parent / "shadow"  # in the repository: a path leading out of it is refused unread
    secret.write_text("root:$6$S3CRET:19000:0:99999:7:::\ntoken: S3CRET\ntoken: S3CRET2\n")

    async def main() -> None:
        async with agent(store, roles=AGENT_ROLES) as a:
            await a("new", run_id="r1", topic="t")
            for tool, arguments, refusal in [
                    ("signers_add", {"bound": "x", "key": str(secret)}, "not an SSH public key"),
                    ("new", {"run_id": "r2", "topic": "t", "template": str(secret)}, "not valid YAML"),
                    ("observe", {"run_id": "r1", "stage": "1", "checkpoint": "FULL", "report": str(secret),
                                 "actor": "collaboration_depth_agent"}, "not valid YAML")]:
                with pytest.raises(ToolError) as caught:
                    await a(tool, **arguments)
                assert refusal in caught.value.doc["error"]["message"], caught.value.doc
                assert "S3CRET" not in str(caught.value.doc), (tool, caught.value.doc)
                result = await a.raw(tool, **arguments)
                assert "S3CRET" not in str(result), tool
    anyio.run(main)


def test_a_call_hands_its_output_to_the_server_and_writes_nothing_to_stdout(
        store: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """stdout is the protocol's: a command's document, its plain text (a research report, the
    allowed-signers file) and its flat refusal come back as the result, never on the process's stdout."""
    served = Served(store, mcp_host(command_table()))
    capfd.readouterr()
    new = served.call("new", {"run_id": "r1", "topic": "T"})
    assert not new.is_error and json.loads(new.text)["run_id"] == "r1"
    started = served.call("research_start_run", {"skill": "s"})
    assert json.loads(started.text)["skill"] == "s"
    report = served.call("research_report", {})
    assert not report.is_error and report.text and not report.text.startswith("{")
    assert served.call("signers_list", {"allowed_signers": True}).text == ""
    refused = served.call("research_complete_run", {"run_id": "run_nope", "status": "completed"})
    assert refused.is_error and json.loads(refused.text)["error"]["code"] == "UNKNOWN_RUN"
    assert refused.exit_code == 2  # the flat refusal's exit status (statedir.commands.table.Exit)
    assert capfd.readouterr().out == ""

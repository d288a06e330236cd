"""`statedir mcp` as a real subprocess over stdio: the SDK's stdio client, raw JSON-RPC lines
(nothing but protocol on stdout), several server processes on one store at once."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

import statedir
from statedir import api
from statedir.gitops import git
from tests.support.mcp_session import document
from tests.support.util import CLEAR_ITEMS, cli, snapshot

pytestmark = pytest.mark.slow  # server processes over stdio, racing


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one, not made by init again)."""
    return repo / "state"


def params(store: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "statedir", "mcp", "--store", str(store),
                                                                 "--tools", "all"],
                                 env=dict(os.environ))


async def call(client: Client, name: str, **arguments: Any) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    return result.is_error, document(result)


def test_the_sdk_stdio_client_drives_a_subprocess_server(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with Client(params(store)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"new", "stage", "show", "validate"} <= names
            failed, made = await call(client, "new", run_id="r1", topic="T")
            assert not failed and made["commit"] == git.head(repo)
            failed, error = await call(client, "show", run_id="r2")
            assert failed and error["error"]["code"] == "UNKNOWN_RUN"
            failed, value = await call(client, "get", run_id="r1", path="current_stage")
            assert (failed, value) == (False, "1")
    anyio.run(main)


def test_an_argument_left_out_or_null_is_refused_never_shifted(store: Path, repo: Path) -> None:
    """The filed cases over real stdio: each refused with INVALID_VALUE naming the argument, none
    read with its later arguments moved one place left, nothing committed."""
    session = "2026-06-30-handoff"
    sd = api.StateDir(store)
    sd.new("r1", topic="T")
    sd.bus(session).init()
    saved = snapshot(repo)

    async def main() -> None:
        async with Client(params(store)) as client:
            for name, arguments, missing in [
                    ("bus_set", {"session": session, "value": "owner"}, "field"),
                    ("bus_append", {"session": session, "field": None, "value": "new-item"}, "field"),
                    ("diff", {"run_id": "r1", "start": None, "end": "HEAD~1"}, "start"),
                    ("set", {"run_id": None, "field": "topic", "value": "x", "reason": "r"}, "run_id")]:
                failed, out = await call(client, name, **arguments)
                assert failed and out["error"]["code"] == "INVALID_VALUE", (name, out)
                assert out["error"]["details"] == {"argument": missing}, (name, out)
    anyio.run(main)
    assert snapshot(repo) == saved


def rpc(id_: int, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, **({"id": id_} if id_ else {})}
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


def test_nothing_but_protocol_on_stdout_and_logs_on_stderr(store: Path, repo: Path) -> None:
    (store / "runs" / "broken").mkdir(parents=True)
    (store / "runs" / "broken" / "state.yaml").write_text("not: [valid\n")  # `runs` warns on stderr about it
    lines = [rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "raw", "version": "0"}}),
             rpc(0, "notifications/initialized"),
             rpc(2, "tools/list"),
             rpc(3, "tools/call", {"name": "new", "arguments": {"run_id": "r1", "topic": "T"}}),
             rpc(4, "tools/call", {"name": "runs", "arguments": {}}),
             rpc(5, "tools/call", {"name": "status", "arguments": {"run_id": "r1"}}),
             rpc(6, "tools/call", {"name": "stage", "arguments": {"run_id": "r1", "stage": "1", "status": "x"}})]
    # stdin stays open until every reply is in: at end of input the server stops, as it should
    proc = subprocess.Popen([sys.executable, "-m", "statedir", "mcp", "--store", str(store)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write("".join(lines))
    proc.stdin.flush()
    replies = []
    while len([r for r in replies if "id" in r]) < 6:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        replies.append(json.loads(line))  # every stdout line is JSON-RPC
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stdout.read() == ""
    stderr = proc.stderr.read()
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    by_id = {r["id"]: r["result"] for r in replies if "id" in r}
    assert set(by_id) == {1, 2, 3, 4, 5, 6}
    assert by_id[1]["serverInfo"]["name"] == "statedir" and "expect_head" in by_id[1]["instructions"]
    assert "Never answer a MANDATORY checkpoint for the user" in by_id[1]["instructions"]
    runs = by_id[4]["structuredContent"]["result"]  # the document once; its text one line
    assert [r["run_id"] for r in runs] == ["broken", "r1"] and runs[0]["error"]["code"] == "BAD_FILE"
    assert "run broken cannot be read" in stderr  # the CLI's warning went to the log, not the wire
    assert "Pipeline:" in by_id[5]["structuredContent"]["line"] and "Pipeline:" in by_id[5]["content"][0]["text"]
    assert by_id[6]["isError"] is True
    assert json.loads(by_id[6]["content"][0]["text"])["error"]["code"] in {"INVALID_VALUE", "ILLEGAL_TRANSITION"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_over_stdio_a_mandatory_checkpoint_is_answered_by_the_user(store: Path, repo: Path, mode: str) -> None:
    """The user is asked through the client's form (an input-required result, or an elicitation
    request mid-call) and their answer recorded; a client that cannot ask is told to; a commit of the
    user's own does not make the agent's expect_head stale."""
    from tests.support.mcp_session import User

    sd = api.StateDir(store)
    sd.new("p", topic="T", entry_point="2.5")
    sd.material("p", ["paper_draft"])
    sd.stage("p", "2.5", "in_progress")
    sd.integrity("p", "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    sd.checklist("p", "2.5", CLEAR_ITEMS, actor="integrity_verification")
    seen = sd.stage("p", "2.5", "completed")["commit"]
    (repo / "notes.txt").write_text("mine\n")
    subprocess.run(["git", "add", "notes.txt"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "user"], cwd=repo, check=True)
    user = User(response="review")

    async def main() -> None:
        async with Client(params(store), mode=mode) as client:  # type: ignore[arg-type]
            failed, out = await call(client, "confirm", run_id="p", response="continue", expect_head=seen)
            assert failed and out["error"]["code"] == "USER_ANSWER_REQUIRED", out
        async with Client(params(store), mode=mode, elicitation_callback=user) as client:  # type: ignore[arg-type]
            failed, out = await call(client, "confirm", run_id="p", response="continue", expect_head=seen)
            assert not failed and out["commit"] == git.head(repo), out

    anyio.run(main)
    assert len(user.asked) == 1 and "MANDATORY" in user.asked[0].message
    [entry] = [e for e in sd.histories("p")["checkpoints"] if e["event"] == "answered"]
    assert (entry["response"], entry["answered_by"]) == ("review", "user")


def test_a_client_gone_mid_call_stops_the_server_quietly(store: Path, repo: Path) -> None:
    """The client's end of stdout is gone before the reply (a client killed mid-call, its death seen
    on stdout before stdin): the reply meets a broken pipe; exit 0, one line, no traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "statedir", "mcp", "--store", str(store)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": "raw", "version": "0"}})
                     + rpc(0, "notifications/initialized"))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    before = git.head(repo)
    proc.stdin.write(rpc(2, "tools/call", {"name": "new", "arguments": {"run_id": "r1", "topic": "T"}}))
    proc.stdin.flush()
    proc.stdout.close()
    deadline = time.monotonic() + 60
    while git.head(repo) == before and time.monotonic() < deadline:  # the call runs to its end
        time.sleep(0.05)
    time.sleep(1)  # its reply meets the broken pipe; the server stops once its input ends too
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    stderr = proc.stderr.read()
    assert "Traceback" not in stderr and stderr.splitlines() == ["statedir mcp: WARNING the client closed the "
                                                                 "connection; stopping"], stderr


KILLED_CLIENT = """
import os, sys, anyio
from mcp import Client, StdioServerParameters

async def main():
    server = StdioServerParameters(command=sys.executable, args=["-m", "statedir", "mcp", "--store", sys.argv[1],
                                                                 "--tools", "all"],
                                   env=dict(os.environ))
    async with Client(server) as client:
        await client.list_tools()
        print("calling", flush=True)
        await client.call_tool("new", {"run_id": "r1", "topic": "T"})
anyio.run(main)
"""


def test_a_real_client_killed_mid_call_leaves_no_traceback(store: Path, repo: Path) -> None:
    held = statedir.open(store)
    with held.store.locked():  # the call waits for the lock while its client is killed
        client = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, str(store)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        assert client.stdout and client.stdout.readline() == "calling\n"
        client.kill()
    _, stderr = client.communicate(timeout=60)  # the server shares the client's stderr: read until it exits
    assert "Traceback" not in stderr and len(stderr.splitlines()) <= 1, stderr
    assert cli("validate", "--store", str(store)).returncode == 0
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""


def test_several_server_processes_on_one_store(store: Path, repo: Path) -> None:
    async def main() -> None:
        async def drive(n: int) -> None:
            async with Client(params(store)) as client:
                for run_id in (f"p{n}a", f"p{n}b"):
                    failed, out = await call(client, "new", run_id=run_id, topic="T")
                    assert not failed, out
                    failed, out = await call(client, "material", run_id=run_id, names=["rq_brief"])
                    assert not failed and out["version_label"] == "research_v1", out

        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(drive, n)
    anyio.run(main)
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True)
    assert int(count.stdout) == 1 + 3 * 2 * 2
    assert cli("validate", "--store", str(store)).returncode == 0
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""


def test_racing_processes_with_one_expected_head_one_wins(store: Path, repo: Path) -> None:
    head = api.StateDir(store).new("r1", topic="T")["commit"]

    async def main() -> list[Any]:
        outcomes: list[Any] = []

        async def write(turns: str) -> None:
            async with Client(params(store)) as client:
                outcomes.append(await call(client, "stage", run_id="r1", stage="1", status="in_progress",
                                           turns=turns, expect_head=head))

        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(write, f"#1..#{n + 2}")
        return outcomes

    outcomes = anyio.run(main)
    assert sorted(failed for failed, _ in outcomes) == [False, True, True]
    assert {out["error"]["code"] for failed, out in outcomes if failed} == {"HEAD_MOVED"}


def test_without_the_sdk_the_command_says_what_to_install(store: Path) -> None:
    code = ("import sys; sys.modules['mcp'] = None; from statedir.cli import main; "
            f"sys.exit(main(['mcp', '--store', {str(store)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout == "" and "pip install 'statedir[mcp]'" in proc.stderr and "MISSING_DEPENDENCY" in proc.stderr

"""An actor or role is a name (statedir.gitops.identity): one that is not an identifier, holds a
newline, a control or bidi character, or is over 64 characters is INVALID_ID on every entry point,
and changes nothing; nothing given as a name becomes a trailer line of its own. Refusals read as
sentences and name the roles that may act."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from statedir import api
from statedir.errors import InvalidId
from statedir.gitops import commit_message, identity
from tests.support.util import cli, snapshot

BAD = ["pipeline_orchestrator\nStatedir-Action: integrity", "integrity\u202everification", "a\x07b", "x" * 65,
       "two words", "", "-leading"]


@pytest.fixture
def store(sd: api.StateDir) -> Path:
    sd.new("r", topic="T")
    return sd.store.root


@pytest.mark.parametrize("name", BAD)
def test_a_bad_name_is_refused_by_the_one_check(name: str) -> None:
    with pytest.raises(InvalidId):
        identity.check_name(name)
    with pytest.raises(InvalidId):  # and where a message is made, whoever calls it
        commit_message.message("s", "r", name, "stage")


ENTRY_POINTS = {
    "stage": ["stage", "r", "1", "in_progress", "--actor", "{}"],
    "new": ["new", "r2", "--topic", "T", "--actor", "{}"],
    "bus": ["bus", "init", "2026-06-30-names", "--actor", "{}"],
    "signers-bound": ["signers", "add", "{}", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB"],
    "sync": ["sync", "--actor", "{}"],
    "research": ["research", "--start-run", "--skill", "deep-research", "--question", "Q?", "--actor", "{}"],
}


@pytest.mark.parametrize("name", [BAD[0], BAD[1], BAD[3]])
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_command_refuses_a_bad_actor_and_changes_nothing(store: Path, name: str, entry: str) -> None:
    repo = store.parent
    before = snapshot(repo)
    proc = cli(*[arg.replace("{}", name) for arg in ENTRY_POINTS[entry]], "--json", cwd=repo)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "INVALID_ID" in proc.stdout or "invalid actor" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr
    assert snapshot(repo) == before


def test_statedir_actor_from_the_environment_is_held_to_it_too(store: Path) -> None:
    repo = store.parent
    before = snapshot(repo)
    proc = cli("stage", "r", "1", "in_progress", "--json", cwd=repo, env={"STATEDIR_ACTOR": BAD[0]})
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "INVALID_ID"
    assert snapshot(repo) == before


def test_an_mcp_call_naming_a_bad_actor_is_invalid_id(store: Path) -> None:
    from mcp import Client

    from statedir.cli.registry import command_table
    from statedir.mcp.host import mcp_host
    from statedir.mcp.server import build

    repo = store.parent
    before = snapshot(repo)

    async def main() -> dict[str, object]:
        async with Client(build(store, mcp_host(command_table()), roles=("pipeline_orchestrator",))) as client:
            result = await client.call_tool("stage", {"run_id": "r", "stage": "1", "status": "in_progress",
                                                      "actor": BAD[0]})
            return json.loads(result.content[0].text)  # type: ignore[no-any-return,union-attr]

    assert anyio.run(main)["error"]["code"] == "INVALID_ID"  # type: ignore[index]
    assert snapshot(repo) == before


def test_no_trailer_comes_of_an_argument(store: Path) -> None:
    """A reason, a topic, a value with a newline and a trailer's shape stay inside the lines they are given in."""
    sd = api.StateDir(store)
    sd.set("r", "topic", "x\nStatedir-Actor: user", reason="why\n\nStatedir-Answered-By: user\nStatedir-Channel: cli")
    out = subprocess.run(["git", "log", "-1", "--format=%(trailers:only,unfold)"], cwd=store.parent,
                         capture_output=True, text=True, check=True).stdout
    keys = [line.split(":", 1)[0] for line in out.splitlines() if line]
    assert keys == ["Statedir-Run", "Statedir-Actor", "Statedir-Action", "Statedir-Request-Id", "Statedir-Request"]
    assert "Statedir-Actor: pipeline_orchestrator" in out
    assert sd.verify()["clean"]


def test_a_reason_cannot_end_the_message_for_git_interpret_trailers(store: Path) -> None:
    """A reason line `---` ended the message for `git interpret-trailers` (and `git am`): the reason's
    own `Statedir-Actor: user` above it was all that tool read as the commit's trailers."""
    sd = api.StateDir(store)
    sd.set("r", "topic", "t2", reason="Statedir-Actor: user\n---\nthe rest")
    body = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=store.parent, capture_output=True, text=True,
                          check=True).stdout
    parsed = subprocess.run(["git", "interpret-trailers", "--parse"], input=body, capture_output=True, text=True,
                            check=True).stdout
    assert [line for line in parsed.splitlines() if line.startswith("Statedir-Actor:")] == [
        "Statedir-Actor: pipeline_orchestrator"], parsed
    assert sd.get("r", "history.transitions")[-1]["reason"] == "Statedir-Actor: user\n---\nthe rest"
    assert sd.verify()["clean"]


def test_a_refusal_is_a_sentence_naming_who_may(store: Path) -> None:
    repo = store.parent
    proc = cli("new", "r3", "--topic", "T", "--actor", "integrity_verification", "--json", cwd=repo)
    message = json.loads(proc.stdout)["error"]["message"]
    assert message.startswith("integrity_verification may not create runs; ") and "pipeline_orchestrator" in message
    proc = cli("stage", "r", "1", "in_progress", "--actor", "collaboration_depth_agent", "--json", cwd=repo)
    error = json.loads(proc.stdout)["error"]
    assert error["message"].startswith("collaboration_depth_agent may not update stages; ")
    assert "pipeline_orchestrator" in error["details"]["allowed"]
    proc = cli("integrity", "r", "2.5", "PASS", "--refs-total", "1", "--refs-verified", "1", "--json", cwd=repo)
    assert json.loads(proc.stdout)["error"]["message"].startswith(
        "pipeline_orchestrator may not record integrity verdicts; integrity_verification")
    # the user, refused an action that is no answer of theirs, is told who may take it (it named nobody)
    proc = cli("integrity", "r", "2.5", "PASS", "--refs-total", "1", "--refs-verified", "1", "--actor", "user",
               "--json", cwd=repo)
    error = json.loads(proc.stdout)["error"]
    assert error["message"].endswith("no answer of the user's; integrity_verification may"), error
    assert error["details"]["allowed"] == ["integrity_verification"]

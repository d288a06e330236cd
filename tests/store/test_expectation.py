"""Compare-and-swap on what a write is about (`--expect REV`, the API's `expect`; MCP's
`expect_head` in tests/mcp): refused with HEAD_MOVED, nothing changed, only where the run's (or the
bus session's) files changed after REV; another run's transition, a bus write or a commit of the
user's own never make REV stale."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import statedir
from statedir import api
from statedir.errors import HeadMoved, InvalidValue
from statedir.gitops import git
from tests.support.util import call, cli, snapshot

SESSION = "2026-06-30-handoff"


def user_commit(repo: Path, name: str = "notes.txt") -> str:
    """A commit of the user's own, of a file outside the store."""
    (repo / name).write_text(f"{name}\n")
    subprocess.run(["git", "add", name], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", f"user: {name}"], cwd=repo, check=True)
    head = git.head(repo)
    assert head is not None
    return head


def cli_in_process(store: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code, out, _ = call([*args, "--store", str(store), "--json"])
    return code, json.loads(out)


def test_commits_elsewhere_never_make_expect_stale(sd: api.StateDir, repo: Path) -> None:
    seen = sd.new("r1", topic="T")["commit"]
    sd.new("r2", topic="T")  # another run's transitions
    sd.stage("r2", "1", "in_progress")
    sd.bus(SESSION).set("phase", "design")  # a bus write
    user_commit(repo)  # the user's own artifact
    assert git.head(repo) != seen
    code, out = cli_in_process(sd.store.root, "stage", "r1", "1", "in_progress", "--expect", seen)
    assert code == 0 and out["commit"] == git.head(repo), out
    # the API takes it too, and an abbreviated commit
    assert sd.set("r1", "topic", "U", reason="sharper", expect=out["commit"][:12])["commit"] == git.head(repo)


def test_a_change_to_the_same_run_is_head_moved_and_changes_nothing(sd: api.StateDir, repo: Path) -> None:
    seen = sd.new("r1", topic="T")["commit"]
    sd.stage("r1", "1", "in_progress")  # the run changes after `seen`
    user_commit(repo)
    saved = snapshot(repo)
    code, out = cli_in_process(sd.store.root, "set", "r1", "topic", "U", "--reason", "x", "--expect", seen)
    assert code == 1 and out["error"]["code"] == "HEAD_MOVED", out
    assert out["error"]["details"] == {"expected": seen, "head": git.head(repo), "changed": "runs/r1"}
    assert "runs/r1 changed after" in out["error"]["message"]
    assert snapshot(repo) == saved
    with pytest.raises(HeadMoved):
        sd.loop("r1", expect=seen)
    assert snapshot(repo) == saved


@pytest.mark.parametrize("inprocess_git", [False, True])  # git's objects read by git, or by libgit2 (MCP)
def test_a_bus_session_is_stale_only_where_it_changed(repo: Path, inprocess_git: bool) -> None:
    statedir.init(repo / "state")
    sd = statedir.open(repo / "state", inprocess_git=inprocess_git)
    bus = sd.bus(SESSION)
    seen = bus.set("phase", "design")["commit"]
    sd.new("r1", topic="T")  # a run's transition and another session: not this session
    sd.bus("2026-06-30-other").append("evidence", "a.md")
    user_commit(repo)
    after = bus.append("outputs", "spec.md", expect=seen)["commit"]
    saved = snapshot(repo)
    with pytest.raises(HeadMoved) as caught:  # the session changed after `seen`
        bus.set("phase", "build", expect=seen)
    assert caught.value.details["changed"] == f"bus/{SESSION}.yaml"
    assert snapshot(repo) == saved
    code, out = cli_in_process(sd.store.root, "bus", "set", SESSION, "phase", "build", "--expect", seen)
    assert code == 1 and out["error"]["code"] == "HEAD_MOVED"
    assert snapshot(repo) == saved
    code, out = cli_in_process(sd.store.root, "bus", "clear", SESSION, "--expect", after)
    assert code == 0 and out["changed"] is True


@pytest.mark.parametrize("inprocess_git", [False, True])
def test_expect_names_a_commit(repo: Path, inprocess_git: bool) -> None:
    statedir.init(repo / "state")
    sd = statedir.open(repo / "state", inprocess_git=inprocess_git)
    sd.new("r1", topic="T")
    saved = snapshot(repo)
    for bad in ("nope", "-x", "HEAD~50", "deadbeef", "HEAD:state"):
        with pytest.raises(InvalidValue):
            sd.stage("r1", "1", "in_progress", expect=bad)
    assert snapshot(repo) == saved
    assert sd.stage("r1", "1", "in_progress", expect="HEAD")["commit"]  # anything rev-parse takes


def test_the_command_line_refuses_a_stale_expect(repo: Path) -> None:
    """The wiring, in a subprocess: exit 1, the HEAD_MOVED document, no commit."""
    statedir.init(repo / "state")
    sd = statedir.open(repo / "state")
    seen = sd.new("r1", topic="T")["commit"]
    sd.stage("r1", "1", "in_progress")
    head = git.head(repo)
    proc = cli("loop", "r1", "--expect", seen, "--json", cwd=repo)
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "HEAD_MOVED"
    assert git.head(repo) == head
    assert "--expect REV" in cli("stage", "--help").stdout

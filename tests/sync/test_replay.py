"""`statedir sync --replay`: where the merge is refused, this clone's unpublished transitions are
decided again on top of the remote's state, through the real CLI with real clones of one bare
remote."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.sync import clean, entries, git, network, ok, store_files, topics_apart
from tests.support.util import CLEAR_ARGS, cli, snapshot

SESSION = "2026-12-01-replay"
TO_REVIEW = (("stage", "r1", "1", "in_progress"),
             ("material", "r1", "rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"),
             ("stage", "r1", "1", "completed"), ("confirm", "r1"), ("material", "r1", "paper_draft"),
             ("stage", "r1", "2", "completed"), ("confirm", "r1"),
             ("integrity", "r1", "2.5", "PASS", "--refs-total", "9", "--refs-verified", "9",
              "--actor", "integrity_verification"),
             ("checklist", "r1", "2.5", *CLEAR_ARGS, "--actor", "integrity_verification"),
             ("stage", "r1", "2.5", "completed"), ("confirm", "r1", "--response", "continue"))


def _trailers(clone: Path, sha: str) -> dict[str, str]:
    out = git(clone, "log", "-1", "--format=%(trailers:unfold,only)", sha)
    return dict(line.split(": ", 1) for line in out.split("\n") if ": " in line)


def _refused(clone: Path, *args: str) -> dict[str, Any]:
    proc = cli("sync", *args, "--json", cwd=clone)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error: dict[str, Any] = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED", error
    return error


def _as_it_was(clone: Path) -> tuple[str, bytes, dict[str, bytes]]:
    """The branch, the index file's bytes and the work tree (a fetch may add objects and refs)."""
    files = {k: v for k, v in snapshot(clone, objects=False).items() if not k.startswith(".git/")}
    return git(clone, "rev-parse", "HEAD"), (clone / ".git" / "index").read_bytes(), files


def _review(tmp_path: Path) -> dict[str, Path]:
    """Two clones at stage 3 of r1: a accepts (published), b asks for a major revision after
    registering the reports and setting the language (unpublished)."""
    c = network(tmp_path, ("a", "b"))
    for step in TO_REVIEW:
        ok(c["a"], *step)
    ok(c["a"], "sync")
    ok(c["b"], "sync")
    for name, decision in (("a", "accept"), ("b", "major_revision")):
        ok(c[name], "material", "r1", "review_reports")
        if name == "b":
            ok(c[name], "set", "r1", "language", "de", "--reason", "the venue asks for German")
        ok(c[name], "material", "r1", "revision_roadmap")
        ok(c[name], "stage", "r1", "3", "completed", "--decision", decision)
    ok(c["a"], "sync")
    return c


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_two_decisions_on_one_review_are_resolved_by_replaying(tmp_path: Path) -> None:
    c = _review(tmp_path)
    b = c["b"]
    original = git(b, "rev-parse", "HEAD")
    git(b, "fetch", "-q")
    theirs = git(c["a"], "rev-parse", "HEAD")
    mine = git(b, "rev-list", "--reverse", f"{theirs}..{original}").split("\n")
    assert len(mine) == 4
    error = _refused(b)
    assert "statedir sync --replay" in error["message"]
    assert ("runs/r1/stages/3.yaml", "decision") in {(c["file"], f["field"]) for c in error["details"]["conflicts"]
                                                     for f in c["fields"]}
    human = cli("sync", cwd=b)
    assert human.returncode == 1 and "statedir sync --replay" in human.stderr

    result = ok(b, "sync", "--replay")
    assert result["status"] == "replayed" and result["pushed"] is True
    assert result["original"] == original and result["onto"] == theirs
    assert [r["from"] for r in result["replayed"]] == mine[:3]
    [refused] = result["refused"]
    assert refused["commit"] == mine[3] and refused["action"] == "stage" and refused["run"] == "r1"
    assert refused["code"] == "IMMUTABLE_FIELD" and "decision" in refused["message"], refused
    assert result["skipped"] == []
    # the originals are kept under the ref; the branch is the remote's side plus the replayed ones
    kept = result["kept"]
    assert kept.startswith("refs/statedir/replayed/main/") and git(b, "rev-parse", kept) == original
    head = git(b, "rev-parse", "HEAD")
    assert head == result["commit"] == git(b, "rev-parse", "origin/main")
    assert git(b, "rev-list", "--reverse", f"{theirs}..HEAD").split("\n") == [r["commit"] for r in result["replayed"]]
    for item in result["replayed"]:
        trailers = _trailers(b, item["commit"])
        assert trailers["Statedir-Replayed-From"] == item["from"]
        assert trailers["Statedir-Run"] == "r1" and trailers["Statedir-Action"] == item["action"]
        assert trailers["Statedir-Request-Id"] != _trailers(b, item["from"])["Statedir-Request-Id"]
    state = json.loads(cli("show", "r1", "--json", cwd=b).stdout)
    assert state["language"] == "de"
    assert state["stages"]["3"]["decision"] == "accept"
    clean(b)
    # the other clone takes it in with a plain sync
    ok(c["a"], "sync")
    assert store_files(c["a"]) == store_files(b)
    clean(c["a"])
    actions = [e["action"] for e in entries(b, "r1")]
    assert actions.count("material") == 1 + 1 + 2 + 2 and actions.count("set") == 1


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_replay_is_shown_to_people_and_needs_refusing_merge(tmp_path: Path) -> None:
    c = _review(tmp_path)
    human = cli("sync", "--replay", cwd=c["b"])
    assert human.returncode == 0, human.stdout + human.stderr
    assert "refused" in human.stdout and "IMMUTABLE_FIELD" in human.stdout
    assert "refs/statedir/replayed/" in human.stdout
    # with nothing refused, --replay is a plain sync
    again = ok(c["b"], "sync", "--replay")
    assert again["status"] == "up_to_date" and "replayed" not in again


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_nothing_to_replay_leaves_everything_as_it_was(tmp_path: Path) -> None:
    """Where every unpublished commit is a hand edit, there is nothing to decide again."""
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "topic A", "--reason", "from A")
    ok(c["a"], "sync")
    path = c["b"] / "state" / "runs" / "r1" / "state.yaml"
    path.write_text(path.read_text().replace("topic: topic of r1", "topic: edited by hand"))
    git(c["b"], "commit", "-q", "-am", "a hand edit")
    head = git(c["b"], "rev-parse", "HEAD")
    before = _as_it_was(c["b"])
    error = _refused(c["b"], "--replay")
    assert "nothing to replay" in error["message"]
    assert [s["commit"] for s in error["details"]["skipped"]] == [head]
    assert _as_it_was(c["b"]) == before
    assert git(c["b"], "for-each-ref", "refs/statedir/") == ""


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_replay_whose_push_is_rejected_leaves_everything_as_it_was(tmp_path: Path) -> None:
    c = _review(tmp_path)
    b = c["b"]
    hook = b / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'no pushing today' >&2\nexit 1\n")
    hook.chmod(0o755)
    (b / "notes.txt").write_text("my own work\n")
    before = _as_it_was(b)
    proc = cli("sync", "--replay", "--json", cwd=b)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "GIT_ERROR" and "nothing was changed" in error["message"]
    assert "refused by a pre-push hook: no pushing today" in error["message"]  # the hook named, and what it said
    assert _as_it_was(b) == before
    assert git(b, "for-each-ref", "refs/statedir/") == ""


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_replayed_bus_append_and_a_rollback(tmp_path: Path) -> None:
    """Bus commits record no request: the field they changed is set or appended again."""
    c = _review(tmp_path)
    b = c["b"]
    ok(b, "bus", "append", SESSION, "notes", "first")
    ok(b, "bus", "set", SESSION, "phase", "two")
    result = ok(b, "sync", "--replay")
    assert [r["action"] for r in result["replayed"]] == ["material", "set", "material", "bus-append", "bus-set"]
    session = json.loads(cli("bus", "get", SESSION, cwd=b).stdout)
    assert session["notes"] == ["first"] and session["phase"] == "two"
    clean(b)
    assert subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=b).returncode == 0


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_run_level_field_names_statedir_set_and_the_api_replays(tmp_path: Path) -> None:
    """Two topics: the refusal names `statedir set`; the API's sync(replay=True) lands this side's."""
    import statedir

    c = topics_apart(tmp_path)
    error = _refused(c["b"])
    assert "statedir sync --replay" in error["message"] and "statedir set r1 topic VALUE" in error["message"]
    result = statedir.open(c["b"] / "state").sync(replay=True)
    assert result["status"] == "replayed" and [r["action"] for r in result["replayed"]] == ["set"]
    assert json.loads(cli("show", "r1", "--json", cwd=c["b"]).stdout)["topic"] == "topic B"
    clean(c["b"])


def test_sync_replay_is_an_mcp_argument() -> None:
    from statedir.cli.registry import command_table
    from statedir.mcp.tools import tools

    schema = tools(command_table())["sync"].input_schema["properties"]
    assert schema["replay"]["type"] == "boolean" and "refs/statedir/replayed/" in schema["replay"]["description"]


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_replay_takes_no_remote_history_a_plain_sync_would_refuse(tmp_path: Path) -> None:
    """The merge was refused before it verified the incoming history: the replay verifies it."""
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "topic A", "--reason", "from A")
    path = c["a"] / "state" / "runs" / "r1" / "state.yaml"
    path.write_text(path.read_text().replace("language: en", "language: xx"))
    git(c["a"], "commit", "-q", "-am", "a hand edit")
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    ok(c["b"], "set", "r1", "topic", "topic B", "--reason", "from B")
    before = _as_it_was(c["b"])
    error = _refused(c["b"], "--replay")
    assert "does not verify" in error["message"] and error["details"]["findings"][0]["kind"] == "hand_edit"
    assert _as_it_was(c["b"]) == before
    assert git(c["b"], "for-each-ref", "refs/statedir/") == ""


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_replay_waiting_for_the_lock_changes_nothing(tmp_path: Path) -> None:
    from statedir.store.store import Store

    c = topics_apart(tmp_path)
    before = _as_it_was(c["b"])
    with Store(c["b"] / "state").locked():
        proc = cli("sync", "--replay", "--json", cwd=c["b"], env={"STATEDIR_LOCK_TIMEOUT": "1"})
    assert proc.returncode == 3 and json.loads(proc.stdout)["error"]["code"] == "LOCK_TIMEOUT", proc.stdout
    assert _as_it_was(c["b"]) == before
    assert git(c["b"], "for-each-ref", "refs/statedir/") == ""

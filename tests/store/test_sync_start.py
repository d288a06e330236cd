"""A sync that fails changes nothing: the branch, the index (what the user staged, byte for
byte) and the work tree are as they were when it started, whether it failed after a
fast-forward, after a merge, or on a retry after a first merge whose push was rejected."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.sync import git, network, ok, stage_by_hand
from tests.support.util import cli, snapshot

# Slow: clones of one remote and syncs refused or failing part way, each checked to change nothing: 1-3 CPU-s a test
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated")]  # each test drives real clones


def _state(clone: Path) -> dict[str, Any]:
    """What a failed sync must leave as it found: HEAD, the index, the staged diff, the files."""
    files = {k: v for k, v in snapshot(clone, objects=False).items() if not k.startswith(".git/")}
    return {"head": git(clone, "rev-parse", "HEAD"), "stage": git(clone, "ls-files", "--stage"),
            "cached": git(clone, "diff", "--cached"), "status": git(clone, "status", "--porcelain"),
            "files": files, "merging": (clone / ".git" / "MERGE_HEAD").exists()}


def _user_files(a: Path) -> None:
    """Files of the users' own, committed and pushed by a beside the store."""
    (a / "notes.txt").write_text("v1\n")
    (a / "shared.txt").write_text("v1\n")
    (a / "gone.txt").write_text("v1\n")
    (a / "old.txt").write_text("v1\n")
    (a / ".gitignore").write_text("*.log\n")
    git(a, "add", ".")
    git(a, "commit", "-q", "-m", "the users' files")
    git(a, "push", "-q")


def _bad_history(a: Path, how: str, push: bool = True) -> None:
    """A commit pushed by a that sync must refuse: an illegal store (`validate`) or a hand edit
    of a legal one (`verify`); it also changes, adds and deletes files of the users'."""
    if how == "validate":
        stage_by_hand(a, "r1", "2", status="in_progress")
    else:
        state = a / "state" / "runs" / "r1" / "state.yaml"
        state.write_text(state.read_text().replace("topic: topic of r1", "topic: edited by hand"))
    (a / "shared.txt").write_text("v2 from a\n")
    (a / "gone.txt").write_text("v2 from a\n")
    (a / "new folder").mkdir()
    (a / "new folder" / "incoming.txt").write_text("from a\n")
    git(a, "rm", "-q", "old.txt")
    git(a, "add", "-A", "shared.txt", "gone.txt", "new folder", "state")
    git(a, "commit", "-q", "-m", f"fails {how}")
    if push:
        git(a, "push", "-q")


def _local_changes(b: Path) -> None:
    """Staged content that differs from the work tree, an unstaged edit, an untracked and an
    ignored file, and a tracked file deleted (not staged)."""
    (b / "notes.txt").write_text("staged\n")
    git(b, "add", "notes.txt")
    (b / "notes.txt").write_text("staged, then edited again\n")
    (b / "draft.txt").write_text("untracked\n")
    (b / "build.log").write_text("ignored\n")
    (b / "gone.txt").unlink()


def _refused(clone: Path, code: str = "MERGE_REFUSED") -> dict[str, Any]:
    proc = cli("sync", "--json", cwd=clone)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == code and "nothing was changed" in error["message"], error
    return error


@pytest.mark.parametrize("how", ["validate", "verify"])
def test_a_refused_fast_forward_keeps_what_the_user_staged(tmp_path: Path, how: str) -> None:
    c = network(tmp_path, ("a", "b"))
    _user_files(c["a"])
    ok(c["b"], "sync")
    _bad_history(c["a"], how)
    _local_changes(c["b"])
    before = _state(c["b"])
    assert "+staged" in before["cached"]
    error = _refused(c["b"])
    assert ("not a legal store" if how == "validate" else "does not verify") in error["message"]
    assert _state(c["b"]) == before
    assert not (c["b"] / "new folder").exists()


def test_a_refused_merge_puts_back_the_branch_the_index_and_the_files(tmp_path: Path) -> None:
    """Both sides have commits: git merges, validate refuses, and all is put back; with
    something staged git cannot merge at all, and sync says so and changes nothing."""
    c = network(tmp_path, ("a", "b"), runs=("r1", "r2"))
    _user_files(c["a"])
    ok(c["b"], "sync")
    _bad_history(c["a"], "validate")
    ok(c["b"], "set", "r2", "topic", "mine", "--reason", "b1")
    _local_changes(c["b"])
    git(c["b"], "restore", "--staged", "notes.txt")  # git merges into an index that matches HEAD only
    before = _state(c["b"])
    assert "not a legal store" in _refused(c["b"])["message"]
    assert _state(c["b"]) == before
    git(c["b"], "add", "notes.txt")
    before = _state(c["b"])
    error = _refused(c["b"], "UNCOMMITTED_EDIT")
    assert "staged: notes.txt" in error["message"], error
    assert _state(c["b"]) == before


def _move_remote_once(clone: Path, mover: Path, marker: Path, then: str) -> None:
    """A pre-push hook in `clone`: once, `mover` pulls and pushes its commits first (the
    remote moves during sync); `then` is the hook's exit status."""
    hook = clone / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\nif [ ! -e '{marker}' ]; then touch '{marker}'; "
                    f"cd '{mover}' && git pull -q --no-rebase --no-edit && git push -q; fi\nexit {then}\n")
    hook.chmod(0o755)


def test_a_refused_retry_after_a_rejected_push_leaves_the_branch_where_it_started(tmp_path: Path) -> None:
    """The first merge succeeds, its push is rejected (the remote moved), the retry's merge is
    refused: the first merge is undone too."""
    c = network(tmp_path, ("a", "b", "c"), runs=("r1", "r2"))
    _user_files(c["a"])
    for name in ("b", "c"):
        ok(c[name], "sync")
    ok(c["a"], "set", "r1", "language", "de", "--reason", "a1")
    ok(c["a"], "sync")
    _bad_history(c["c"], "verify", push=False)  # pushed by b's hook below
    ok(c["b"], "set", "r2", "topic", "mine", "--reason", "b1")
    _local_changes(c["b"])
    git(c["b"], "restore", "--staged", "notes.txt")
    marker = tmp_path / "moved"
    _move_remote_once(c["b"], c["c"], marker, then="0")
    before = _state(c["b"])
    error = _refused(c["b"])
    assert marker.exists() and "does not verify" in error["message"]
    assert _state(c["b"]) == before
    assert "sync: merge" not in git(c["b"], "log", "--format=%s", "-3")


def test_a_push_that_fails_leaves_the_branch_where_it_started(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"), runs=("r1", "r2"))
    ok(c["a"], "set", "r1", "language", "de", "--reason", "a1")
    ok(c["a"], "sync")
    ok(c["b"], "set", "r2", "topic", "mine", "--reason", "b1")
    hook = c["b"] / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'not today' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = _state(c["b"])
    error = _refused(c["b"], "GIT_ERROR")
    assert "push" in error["message"]
    assert _state(c["b"]) == before


def test_an_ignored_file_in_the_way_of_incoming_history_is_never_overwritten(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    _user_files(c["a"])
    ok(c["b"], "sync")
    (c["a"] / "build.log").write_text("from a\n")
    git(c["a"], "add", "-f", "build.log")
    git(c["a"], "commit", "-q", "-m", "a log, forced in")
    _bad_history(c["a"], "validate")
    (c["b"] / "build.log").write_text("mine, ignored\n")
    before = _state(c["b"])
    proc = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=c["b"], capture_output=True, text=True)
    assert "!! build.log" in proc.stdout
    _refused(c["b"], "UNCOMMITTED_EDIT")
    assert _state(c["b"]) == before and (c["b"] / "build.log").read_text() == "mine, ignored\n"

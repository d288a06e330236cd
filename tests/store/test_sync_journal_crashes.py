"""SIGKILL `sync`, `sync --replay` and `doctor --fix` (the whole process group, git included) at
random moments: the next command finishes or undoes what was killed, and no accepted transition is
lost: each of the clone's unpublished transitions reaches the remote, itself or replayed once.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.isolation import isolated_at
from tests.support.reliability import assert_store_equals_last_commit
from tests.support.sync import git, network, ok, topics_apart
from tests.support.util import cli

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git and the CLI

TRIALS = 30


def _unpublished(b: Path) -> None:
    """Besides the clone's own topic of r1: a new run r2 and three retitles of it."""
    ok(b, "new", "r2", "--topic", "t0")
    for i in range(1, 4):
        ok(b, "set", "r2", "topic", f"t{i}", "--reason", "r")


def _conflicting(base: Path) -> dict[str, Path]:
    """a and b both retitled r1 (the merge is refused: `sync --replay` resolves it)."""
    c = topics_apart(base)
    _unpublished(c["b"])
    return c


def _apart(base: Path) -> dict[str, Path]:
    """a made a transition on r1 and published it; b's unpublished ones merge with it."""
    c = network(base, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "topic A", "--reason", "from A")
    ok(c["a"], "sync")
    ok(c["b"], "set", "r1", "language", "de", "--reason", "from B")
    _unpublished(c["b"])
    return c


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each scenario made once through the CLI, copied into each trial."""
    root = tmp_path_factory.mktemp("sync-crashes")
    with isolated_at(root):
        return {"conflicting": _conflicting(root / "conflicting")["b"].parent,
                "apart": _apart(root / "apart")["b"].parent}


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    for name in ("a", "b"):
        git(target / name, "remote", "set-url", "origin", str(target / "remote.git"))
    return target / "b"


def _kill_at_random(b: Path, args: list[str], rng: random.Random, longest: float) -> int:
    proc = subprocess.Popen([sys.executable, "-P", "-m", "statedir", *args], cwd=b, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(rng.uniform(0.0, longest))
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:  # it finished first
        pass
    return proc.wait()


def _originals(b: Path) -> list[str]:
    return git(b, "rev-list", "origin/main..HEAD").split()


def _nothing_lost(b: Path, originals: list[str], topic: str = "t3") -> None:
    """Every original is on the remote's branch, itself or replayed exactly once; the store is whole."""
    remote = b.parent / "remote.git"
    published = set(git(remote, "rev-list", "main").split())
    replayed = git(remote, "log", "--format=%(trailers:key=Statedir-Replayed-From,valueonly)", "main").split()
    for sha in originals:
        assert sha in published or replayed.count(sha) == 1, (sha, replayed.count(sha))
    assert git(b, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    assert not (b / ".git" / "index.lock").exists() and not (b / ".git" / "MERGE_HEAD").exists()
    assert_store_equals_last_commit(b)
    assert f"topic: {topic}" in git(b, "show", "HEAD:state/runs/r2/state.yaml")


@pytest.mark.slow  # 30 clones killed in the middle of a replay, each recovered and synced through the CLI
@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_replay_killed_at_any_moment_loses_no_transition(built: dict[str, Path], tmp_path: Path, trial: int) -> None:
    """Half the trials then run `doctor --fix` first, the others `sync --replay` at once."""
    b = _copy(built["conflicting"], tmp_path / "net")
    originals = _originals(b)
    _kill_at_random(b, ["sync", "--replay"], random.Random(trial), 6.0)
    if trial % 2:
        assert ok(b, "doctor", "--fix") is not None
        assert git(b, "for-each-ref", "refs/statedir/undone/") == ""
        on_branch = set(git(b, "rev-list", "HEAD").split())
        replayed = git(b, "log", "--format=%(trailers:key=Statedir-Replayed-From,valueonly)", "HEAD").split()
        assert all(sha in on_branch or sha in replayed for sha in originals)
    done = ok(b, "sync", "--replay")
    assert done["status"] in ("replayed", "pushed", "up_to_date"), done
    _nothing_lost(b, originals)


@pytest.mark.slow  # 30 clones killed in the middle of a merging sync, each recovered and synced through the CLI
@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_sync_killed_at_any_moment_loses_no_transition(built: dict[str, Path], tmp_path: Path, trial: int) -> None:
    b = _copy(built["apart"], tmp_path / "net")
    originals = _originals(b)
    _kill_at_random(b, ["sync"], random.Random(100 + trial), 4.0)
    ok(b, "status", "r1", "--line")  # the next command, a reader: it puts a dead sync back first
    assert all(sha in set(git(b, "rev-list", "HEAD").split()) for sha in originals)
    ok(b, "sync")
    _nothing_lost(b, originals)


@pytest.mark.slow  # 30 clones whose doctor --fix is killed while it recovers a dead replay and transition
@pytest.mark.parametrize("trial", range(TRIALS))
def test_doctor_fix_killed_at_any_moment_loses_no_transition(built: dict[str, Path], tmp_path: Path,
                                                             trial: int) -> None:
    b = _copy(built["conflicting"], tmp_path / "net")
    killed = subprocess.run([sys.executable, "-P", "-m", "statedir", "set", "r2", "topic", "t4", "--reason", "r"],
                            cwd=b, env={**os.environ, "STATEDIR_FAULT": "after_commit"}, capture_output=True)
    assert killed.returncode == -signal.SIGKILL  # committed: an accepted transition, its journal left
    originals = _originals(b)
    dead = subprocess.run([sys.executable, "-P", "-m", "statedir", "sync", "--replay"], cwd=b,
                          env={**os.environ, "STATEDIR_FAULT": "replay_moving"}, capture_output=True)
    assert dead.returncode == -signal.SIGKILL  # the originals' ref and the sync's record written, nothing moved
    _kill_at_random(b, ["doctor", "--fix"], random.Random(200 + trial), 3.0)
    ok(b, "doctor", "--fix")
    assert set(originals) <= set(git(b, "rev-list", "HEAD").split())
    ok(b, "sync", "--replay")
    _nothing_lost(b, originals, "t4")


def _killed_while_merging(b: Path) -> None:
    """SIGKILL a sync's whole process group while git's merge holds the index and runs the driver."""
    proc = subprocess.Popen([sys.executable, "-P", "-m", "statedir", "sync"], cwd=b, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while not list(b.glob(".merge_file_*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert (b / ".git" / "index.lock").exists() and list(b.glob(".merge_file_*"))


@pytest.mark.slow  # a sync killed in the middle of git's merge, twice, through the CLI
@pytest.mark.parametrize("then", ["doctor --fix", "a transition"])
def test_a_sync_killed_in_gits_merge_leaves_no_lock_behind(built: dict[str, Path], tmp_path: Path, then: str) -> None:
    b = _copy(built["apart"], tmp_path / "net")
    originals = _originals(b)
    _killed_while_merging(b)
    if then == "doctor --fix":
        report = json.loads(cli("doctor", "--json", cwd=b).stdout)  # exit 1: findings
        assert {"index_lock", "merge_file"} <= {f["kind"] for f in report["findings"]}, report
        ok(b, "doctor", "--fix")
        assert not (b / ".git" / "index.lock").exists() and not list(b.glob(".merge_file_*"))
    ok(b, "set", "r2", "topic", "t4", "--reason", "after the kill")  # waits for the dead git's lock to age
    assert not (b / ".git" / "index.lock").exists() and not list(b.glob(".merge_file_*"))
    assert set(originals) <= set(git(b, "rev-list", "HEAD").split())
    ok(b, "sync")
    _nothing_lost(b, originals, "t4")


def test_a_lock_a_live_git_holds_is_never_a_dead_statedirs(tmp_path: Path) -> None:
    """A dead sync's record of its gits does not make a lock a live git made since its own."""
    from statedir.gitops import git_owner, index_lock

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    gitdir = tmp_path / ".git"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (gitdir / "statedir").mkdir()
    (gitdir / "statedir" / git_owner.NAME).write_text(f"{dead.pid} - {tmp_path}\n")
    holder = subprocess.Popen(["git", "-C", str(tmp_path), "cat-file", "--batch"], stdin=subprocess.PIPE)
    for _ in range(1000):  # a loaded machine: the git is running in the repository (exec'd, -C taken) first
        with contextlib.suppress(OSError):
            if Path(f"/proc/{holder.pid}/comm").read_text().startswith("git") and \
                    Path(os.readlink(f"/proc/{holder.pid}/cwd")) == tmp_path:
                break
        time.sleep(0.01)
    try:
        (gitdir / "index.lock").write_text("")  # made since the record: the live git's, as far as anyone can tell
        old = time.time() - 60
        os.utime(gitdir / "index.lock", (old, old))
        assert index_lock.left_by_the_dead(gitdir)
        assert not index_lock.release_dead_index_lock(gitdir)  # a git runs in the repository
        assert (gitdir / "index.lock").exists()
    finally:
        holder.communicate(b"")
    assert index_lock.release_dead_index_lock(gitdir) and not (gitdir / "index.lock").exists()

"""Failure paths keep the user's data: git failing or pointed elsewhere, git operations in
progress, hand edits, users committing meanwhile, whole process groups killed, hostile limits.

Each scenario runs in a small repository (`git commit --only`) and in one whose index is over
1 MiB (plumbing), through the real CLI.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import InvalidValue
from tests.support.reliability import assert_store_equals_last_commit, git, material_labels, state_commits
from tests.support.util import cli, cli_json, diverge, make_large, segment, snapshot

pytestmark = [pytest.mark.slow,  # every failure path, small and large (14,000-file) repositories
              pytest.mark.usefixtures("isolated")]

@pytest.fixture(params=["small", "large"])
def store(repo: Path, request: pytest.FixtureRequest) -> Path:
    """A store with run p1 at stage 1, in a small or a large repository (util.make_large: built
    once and copied)."""
    if request.param == "large":
        make_large(repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("p1", topic="x")
    sd.stage("p1", "1", "in_progress")
    return repo


SET = ["set", "p1", "topic", "y", "--reason", "r", "--json"]


def _refused_and_unchanged(repo: Path, args: list[str], code: int, env: dict[str, str] | None = None,
                           error: str | None = None) -> dict:
    before = snapshot(repo, objects=False)
    proc = cli(*args, cwd=repo, env=env)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert snapshot(repo, objects=False) == before
    out = json.loads(proc.stdout)
    if error:
        assert out["error"]["code"] == error, out
    return out


# 1. A failing git call never deletes files; git variables that point elsewhere are refused.
@pytest.mark.parametrize("case", ["other GIT_DIR", "GIT_WORK_TREE", "GIT_DIR=.", "GIT_INDEX_FILE", "dangling .git",
                                  "corrupt HEAD", "owned by another user"])
def test_a_failing_or_redirected_git_keeps_every_file(store: Path, tmp_path: Path, case: str) -> None:
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    env = {"other GIT_DIR": {"GIT_DIR": str(other / ".git")}, "GIT_WORK_TREE": {"GIT_WORK_TREE": str(tmp_path)},
           "GIT_DIR=.": {"GIT_DIR": "."}, "GIT_INDEX_FILE": {"GIT_INDEX_FILE": str(tmp_path / "idx")}}.get(case)
    dot_git = store / ".git"
    if case == "owned by another user" and os.geteuid() != 0:
        pytest.skip("needs root to give the repository to another user")
    before = snapshot(store, objects=False)
    other_before = snapshot(other)
    try:
        if case == "dangling .git":
            dot_git.rename(tmp_path / "moved.git")
            dot_git.write_text("gitdir: /nowhere/at/all\n")
        elif case == "corrupt HEAD":
            head = (dot_git / "HEAD").read_bytes()
            (dot_git / "HEAD").write_text("garbage\n")
        elif case == "owned by another user":
            subprocess.run(["chown", "-R", "65534:65534", str(store)], check=True)
        proc = cli(*SET, cwd=store, env=env)
    finally:
        if case == "dangling .git":
            dot_git.unlink()
            (tmp_path / "moved.git").rename(dot_git)
        elif case == "corrupt HEAD":
            (dot_git / "HEAD").write_bytes(head)
        elif case == "owned by another user":
            subprocess.run(["chown", "-R", "0:0", str(store)], check=True)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] == "GIT_ERROR"
    assert "Traceback" not in proc.stderr
    if env:
        assert next(iter(env)) in proc.stdout  # the message names the variable
    assert snapshot(store, objects=False) == before
    assert snapshot(other) == other_before
    assert cli(*SET, cwd=store).returncode == 0
    assert_store_equals_last_commit(store)


def test_a_git_variable_naming_this_very_repository_is_harmless(store: Path) -> None:
    code, out = cli_json(*SET[:-1], cwd=store, env={"GIT_DIR": str(store / ".git"), "GIT_WORK_TREE": str(store)})
    assert code == 0, out
    assert_store_equals_last_commit(store)


# 2. A user committing meanwhile never undoes statedir's commits, and statedir never fails for it.
# The user commits a file of their own with `git commit -- PATH`; a `git add` racing a transition
# can write back an index it read before the transition (git reads the index before taking its
# lock, the same lost update two of git's own commands can suffer): see the README.
# Writers are CLI processes, or long-lived API callers committing in-process with libgit2.
WRITERS = {
    "cli": "import subprocess, sys\ncodes = [subprocess.run([sys.executable, '-m', 'statedir', 'set', '{run}', "
           "'topic', f'v{{i}}', '--reason', 'r'], capture_output=True).returncode for i in range(8)]\nprint(codes)",
    "libgit2": "import statedir\nsd = statedir.open('state', inprocess_git=True)\ncodes = []\nfor i in range(8):\n"
               "    sd.set('{run}', 'topic', f'v{{i}}', reason='r')\n    codes.append(0)\nprint(codes)",
}


@pytest.mark.parametrize("writer", WRITERS)
def test_user_commits_meanwhile_never_undo_a_transition(store: Path, writer: str) -> None:
    (store / "user.txt").write_text("start\n")
    git(store, "add", "user.txt")
    git(store, "commit", "-q", "-m", "user start")
    for n in range(4):
        assert cli("new", f"w{n}", "--topic", "t", cwd=store).returncode == 0
    writers = [subprocess.Popen([sys.executable, "-c", WRITERS[writer].format(run=f"w{n}")],
                                cwd=store, stdout=subprocess.PIPE, text=True) for n in range(4)]
    n = 0
    while any(w.poll() is None for w in writers) or n < 5:
        (store / "user.txt").write_text(f"{n}\n")
        done = subprocess.run(["git", "commit", "-q", "-m", f"user {n}", "--", "user.txt"], cwd=store,
                              capture_output=True).returncode == 0
        n += done  # a user whose git met statedir's index lock tries again, as with any git
    for w in writers:
        out, _ = w.communicate()
        assert out.strip() == str([0] * 8)
    users = [line.split()[0] for line in git(store, "log", "--format=%H %s").splitlines()
             if line.split()[1] == "user"]
    assert len(users) == n + 1
    for sha in users:
        touched = git(store, "show", "--format=", "--name-only", sha).split()
        assert touched == ["user.txt"], (sha, touched)
    for n in range(4):
        log = api.StateDir(store / "state").histories(f"w{n}")["transitions"]
        assert [e["action"] for e in log] == ["new"] + ["set"] * 8
        assert git(store, "show", f"HEAD:state/runs/w{n}/state.yaml").count("topic: v7") == 1


# 3. Killing the whole process group leaves the index consistent once the next command ran.
def test_killing_the_whole_process_group_leaves_index_and_head_consistent(store: Path) -> None:
    rng = random.Random(9)
    for trial in range(12):
        proc = subprocess.Popen([sys.executable, "-m", "statedir", "material", "p1", "paper_draft"], cwd=store,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(rng.uniform(0.05, 0.5))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        status = cli("status", "p1", "--line", cwd=store)
        assert status.returncode == 0, status.stderr
        assert not (store / ".git" / "index.lock").exists()
        assert_store_equals_last_commit(store)
        assert git(store, "diff", "--cached", "--name-only", "HEAD", "--", "state") == ""
        (store / f"after{trial}.txt").write_text("x\n")
        git(store, "add", f"after{trial}.txt")
        git(store, "commit", "-q", "-m", "a user's commit after the kill")
        assert git(store, "show", "--format=", "--name-only", "HEAD").split() == [f"after{trial}.txt"]
    labels = material_labels(store, "p1")
    assert set(labels) == {f"paper_draft_v{n}" for n in range(1, len(labels) + 1)}


def _branch_lock(repo: Path) -> Path:
    return repo / ".git" / ((repo / ".git" / "HEAD").read_text().strip().removeprefix("ref: ") + ".lock")


def test_the_locks_of_a_git_killed_with_its_writer_are_released(store: Path) -> None:
    """A git killed holding HEAD's lock (SIGKILL cannot be caught) would block every later commit:
    the next statedir command releases the locks a dead writer's git left, and no one else's."""
    before = git(store, "rev-parse", "HEAD")
    killed = cli("material", "p1", "paper_draft", cwd=store, env={"STATEDIR_FAULT": "during_commit"})
    assert killed.returncode == -signal.SIGKILL and (store / ".git" / "index.lock").exists()
    left = [store / ".git" / "HEAD.lock", _branch_lock(store), store / ".git" / "next-index-99999.lock"]
    for lock in left:  # what `git commit --only`, killed mid-way, leaves behind
        lock.write_text("")
        os.utime(lock, (time.time() - 60, time.time() - 60))
    assert cli("status", "p1", "--line", cwd=store).returncode == 0
    assert [lock for lock in left if lock.exists()] == [] and not (store / ".git" / "index.lock").exists()
    assert git(store, "rev-parse", "HEAD") == before and material_labels(store, "p1") == []
    git(store, "commit", "-q", "--allow-empty", "-m", "a user's commit after the kill")


def test_a_ref_lock_from_before_the_writer_is_not_statedirs_to_release(store: Path) -> None:
    theirs = _branch_lock(store)
    theirs.write_text("")  # another git's, held (or left) before statedir began
    killed = cli("material", "p1", "paper_draft", cwd=store, env={"STATEDIR_FAULT": "during_commit"})
    assert killed.returncode == -signal.SIGKILL
    assert cli("status", "p1", "--line", cwd=store).returncode == 0
    assert theirs.exists() and not (store / ".git" / "index.lock").exists()


def test_a_ref_lock_a_live_git_holds_is_never_released(store: Path) -> None:
    """A writer died holding the index; meanwhile the user's git holds the branch's lock for
    seconds (a slow reference-transaction hook): statedir waits for that git, never removes its lock."""
    killed = cli("material", "p1", "paper_draft", cwd=store, env={"STATEDIR_FAULT": "during_commit"})
    assert killed.returncode == -signal.SIGKILL
    hook = store / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text('#!/bin/sh\n[ "$1" = prepared ] && sleep 4\nexit 0\n')
    hook.chmod(0o755)
    target = git(store, "rev-parse", "HEAD~1").strip()
    branch = git(store, "symbolic-ref", "HEAD").strip()
    users = subprocess.Popen(["git", "update-ref", branch, target], cwd=store, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)  # its lock is older than a dead git's would need to be
    assert _branch_lock(store).exists()
    assert cli("status", "p1", "--line", cwd=store).returncode == 0
    _, err = users.communicate()
    assert users.returncode == 0, err
    assert git(store, "rev-parse", "HEAD").strip() == target and not (store / ".git" / "index.lock").exists()


# 4. validate never calls a half-written store valid.
def test_validate_rolls_back_an_interrupted_transition_first(store: Path) -> None:
    killed = cli("material", "p1", "paper_draft", cwd=store, env={"STATEDIR_FAULT": "between_files"})
    assert killed.returncode == -signal.SIGKILL
    hook = cli("validate", "state/runs/p1/state.yaml", cwd=store)
    assert hook.returncode == 1 and "interrupted" in hook.stdout
    whole = cli("validate", cwd=store)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert_store_equals_last_commit(store)
    assert material_labels(store, "p1") == []


# 5. A transition never commits a change it did not make.
@pytest.mark.parametrize("edit", ["state", "log", "stage comment"])
def test_a_hand_edit_is_refused_not_committed(store: Path, edit: str) -> None:
    run = store / "state" / "runs" / "p1"
    if edit == "state":
        path = run / "state.yaml"
        path.write_text(path.read_text().replace("topic: x", "topic: edited").replace("loop_count: 0",
                                                                                     "loop_count: 7"))
    elif edit == "log":
        path = run / segment("transitions")
        path.write_text(path.read_text() + "- at: '2026-01-01T00:00:00Z'\n  actor: me\n  action: set\n"
                        "  summary: forged\n  reason: null\n")
    else:
        path = run / "stages" / "1.yaml"
        path.write_text(path.read_text() + "# a note of mine\n")
    out = _refused_and_unchanged(store, ["stage", "p1", "1", "completed", "--json"], 3, error="UNCOMMITTED_EDIT")
    assert str(path.relative_to(store)) in out["error"]["message"]
    git(store, "checkout", "HEAD", "--", "state")
    assert cli("stage", "p1", "1", "completed", cwd=store).returncode == 0


# 6. No traceback: a symlinked lock, a read-only store, a write failing and its rollback too.
def test_a_symlinked_lock_file_is_a_clear_error(store: Path, tmp_path: Path) -> None:
    lock = store / "state" / ".statedir.lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(tmp_path / "elsewhere")
    out = _refused_and_unchanged(store, SET, 3, error="CORRUPT_STORE")
    assert "symlink" in out["error"]["message"]
    assert not (tmp_path / "elsewhere").exists()


def test_a_read_only_store_reads_and_refuses_writes_clearly(store: Path) -> None:
    (store / "state" / ".statedir.lock").unlink(missing_ok=True)  # a fresh clone has none
    state = store / "state"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("needs a mount namespace for a read-only bind mount")

    def ro(*args: str) -> subprocess.CompletedProcess[str]:
        script = f'mount --bind -o ro "{state}" "{state}" && exec "$@"'
        return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", sys.executable, "-m", "statedir", *args],
                              cwd=store, capture_output=True, text=True)

    before = snapshot(store, objects=False)
    read = ro("status", "p1", "--line")
    assert read.returncode == 0, read.stderr
    write = ro(*SET)
    assert write.returncode == 3 and "Traceback" not in write.stderr, write.stdout + write.stderr
    assert json.loads(write.stdout)["error"]["code"] == "IO_ERROR"
    assert snapshot(store, objects=False) == before


def test_a_failing_rollback_keeps_its_journal_and_the_next_command_finishes_it(store: Path) -> None:
    before = snapshot(store, objects=False)
    proc = cli(*SET, cwd=store, env={"STATEDIR_FAULT": "between_files:enospc,during_recovery:enospc"})
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "journal" in json.loads(proc.stdout)["error"]["message"]
    assert (store / "state" / ".statedir.txn").exists()
    again = cli("status", "p1", "--line", cwd=store)
    assert again.returncode == 0 and "Traceback" not in again.stderr
    assert snapshot(store, objects=False) == before


# 7. Git operations in progress are refused; a detached HEAD is a warning.
def _conflict(repo: Path, operation: str) -> None:
    (repo / "user.txt").write_text("base\n")
    git(repo, "add", "user.txt")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    diverge(repo, "user.txt")
    args = {"merge": ["merge", "side"], "rebase": ["rebase", "side"], "cherry-pick": ["cherry-pick", "side"],
            "revert": ["revert", "--no-edit", "HEAD"]}[operation]
    if operation == "revert":
        (repo / "user.txt").write_text("again\n")
        git(repo, "commit", "-q", "-am", "again")
        args = ["revert", "--no-edit", "HEAD~1"]
    assert base
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    assert proc.returncode != 0, proc.stdout  # a conflict: the operation waits for the user


@pytest.mark.parametrize("operation", ["merge", "rebase", "cherry-pick", "revert"])
def test_a_git_operation_in_progress_is_refused(store: Path, operation: str) -> None:
    _conflict(store, operation)
    out = _refused_and_unchanged(store, SET, 3, error="GIT_ERROR")
    assert "in progress" in out["error"]["message"]
    git(store, operation, "--abort")
    assert cli(*SET, cwd=store).returncode == 0
    assert_store_equals_last_commit(store)


def test_a_bisect_in_progress_is_refused(store: Path) -> None:
    git(store, "bisect", "start")
    _refused_and_unchanged(store, SET, 3, error="GIT_ERROR")
    git(store, "bisect", "reset")


def test_a_detached_head_warns(store: Path) -> None:
    git(store, "checkout", "-q", "--detach")
    proc = cli(*SET, cwd=store)
    assert proc.returncode == 0
    assert any("detached" in w for w in json.loads(proc.stdout)["warnings"])
    assert "detached" in proc.stderr


# 8. Every write path checks the limits every read path enforces.
def test_the_api_refuses_what_no_reader_could_read_back(store: Path) -> None:
    sd = api.StateDir(store / "state")
    before = snapshot(store, objects=False)
    with pytest.raises(InvalidValue, match="bytes"):
        sd.set("p1", "topic", "x" * 17_000_000, reason="huge")
    deep: dict = {}
    node = deep
    for _ in range(80):
        node["k"] = {}
        node = node["k"]
    with pytest.raises(InvalidValue, match="nested"):
        sd.observe("p1", "1", "FULL", {"scores": deep, "advisory_only": True}, actor="collaboration_depth_agent")
    assert snapshot(store, objects=False) == before


# 9. Readers never see half a transition.
def test_api_readers_beside_a_writer_never_see_half_a_transition(store: Path) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys\nfor i in range(15):\n"
         "    subprocess.run([sys.executable, '-m', 'statedir', 'material', 'p1', 'paper_draft'], check=True)"],
        cwd=store)
    sd = api.StateDir(store / "state")
    reads = 0
    while writer.poll() is None:
        t, run, _ = sd.load("p1")
        label = run.state["current_version"].get("paper_draft")
        assert label is None or label in run.passports
        sd.get("p1", "current_version")
        reads += 1
    assert writer.returncode == 0 and reads > 0
    assert set(material_labels(store, "p1")) == {f"paper_draft_v{n}" for n in range(1, 16)}


# 10. --file is streamed and must be a regular file; lock timeouts are numbers.
def test_file_arguments_are_streamed_and_must_be_regular(store: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        out = _refused_and_unchanged(store, ["material", "p1", "paper_draft", "--file", str(path), "--json"], 2)
        assert out["error"]["code"] == "INVALID_VALUE"
    big = store / "big.bin"  # in the repository (the work tree): a passport names only files every clone holds
    with big.open("wb") as f:
        f.truncate(300 * 1024 * 1024)  # sparse: 300 MiB of zeros
    # VmHWM: this process's own peak since exec (ru_maxrss would carry pytest's size across the fork)
    peak = ("import re, sys\nfrom statedir.cli import main\ncode = main(sys.argv[1:])\n"
            "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]\n"
            "sys.stderr.write(f'PEAK {hwm}\\n')\nsys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", peak, "material", "p1", "paper_draft", "--file", str(big), "--json"],
                          cwd=store, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    peak_kib = int(proc.stderr.rsplit("PEAK ", 1)[1])  # this process's own peak, not other tests' children
    assert peak_kib < 200 * 1024, peak_kib  # never the whole file in memory


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "soon"])
def test_lock_timeouts_must_be_finite_numbers(store: Path, value: str) -> None:
    _refused_and_unchanged(store, SET, 2, env={"STATEDIR_LOCK_TIMEOUT": value}, error="INVALID_VALUE")


def test_state_commits_stay_one_per_transition(store: Path) -> None:
    before = len(state_commits(store))
    assert cli(*SET, cwd=store).returncode == 0
    assert len(state_commits(store)) == before + 1

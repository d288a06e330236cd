"""The shipped pre-push example: a clean history pushes; a hand edit is refused, and only the
commits the remote lacks are replayed."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from statedir import api
from tests.support.history import drive, git, hand_commit
from tests.support.util import ROOT


def push(repo: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["git", "push", "-q", "origin", "main"], cwd=repo, capture_output=True, text=True, env=env)


def with_pre_push(sd: api.StateDir, repo: Path, remote: Path) -> Path:
    """`repo` with the example pre-push hook and a new bare `remote` as origin, its run p1 three
    transitions on: returns the remote."""
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    shutil.copy(ROOT / "examples" / "pre-push", hook)
    drive(sd, repo / "draft.md", 3)
    return remote


def test_pre_push_runs_verify(sd: api.StateDir, repo: Path, tmp_path: Path) -> None:
    remote = with_pre_push(sd, repo, tmp_path / "remote.git")
    first = push(repo)
    assert first.returncode == 0, first.stderr
    drive_more = sd.stage("p1", "1", "completed")
    path = repo / "state/runs/p1/state.yaml"
    path.write_text(path.read_text().replace("topic: AI and QA", "topic: by hand"))
    edit = hand_commit(repo)
    refused = push(repo)
    assert refused.returncode != 0
    assert f"{edit[:10]}  hand_edit" in refused.stdout + refused.stderr
    assert "verified 2 commit(s)" in refused.stdout + refused.stderr  # only what the remote lacks
    assert drive_more["commit"] != git(remote, "rev-parse", "main").strip()


def test_a_reviewed_finding_is_acknowledged_once_and_then_pushes(sd: api.StateDir, repo: Path, tmp_path: Path) -> None:
    """The hand edit refused above, reviewed and acknowledged (one commit): the push goes through;
    a new branch then replays only what the remote lacks, not the acknowledged edit's history."""
    with_pre_push(sd, repo, tmp_path / "remote.git")
    path = repo / "state/runs/p1/state.yaml"
    path.write_text(path.read_text().replace("topic: AI and QA", "topic: by hand"))
    edit = hand_commit(repo)
    assert push(repo).returncode != 0
    from tests.support.util import cli

    assert cli("verify", "--acknowledge", edit, cwd=repo).returncode == 2  # a reason is required
    done = cli("verify", "--acknowledge", edit, "--reason", "reviewed: the topic was mistyped", cwd=repo)
    assert done.returncode == 0 and "acknowledge 1 verify finding(s)" in done.stdout, done.stderr
    pushed = push(repo)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    git(repo, "checkout", "-q", "-b", "topic")
    sd.stage("p1", "1", "completed")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    branch = subprocess.run(["git", "push", "-q", "origin", "topic"], cwd=repo, capture_output=True, text=True,
                            env=env)
    assert branch.returncode == 0 and "verified 1 commit(s): clean" in branch.stdout + branch.stderr

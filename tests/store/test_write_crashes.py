"""SIGKILL a writer at every step of a transition, and at random moments; fail writes and git.

After each, the next ordinary command succeeds and the store equals the last commit: no half
transition visible, no committed transition lost.
"""
from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statedir import api, fault_injection
from tests.support.reliability import assert_store_equals_last_commit, material_labels, state_commits
from tests.support.util import cli, make_large, snapshot

pytestmark = [pytest.mark.slow,  # crashes injected at every step, small and large repositories
              pytest.mark.usefixtures("isolated")]

# A transition that writes several files (state, a passport) and appends to a log.
STEP = ["material", "r1", "paper_draft", "--json"]


@pytest.fixture(params=["small", "large"])
def store(repo: Path, request: pytest.FixtureRequest) -> Path:
    """A store in a small repository (`git commit --only`) and in one whose index is large
    enough for the plumbing path (commit-tree, update-ref)."""
    if request.param == "large":
        make_large(repo)
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("r1", topic="crash test")
    sd.stage("r1", "1", "in_progress")
    return repo


@pytest.mark.parametrize("point", fault_injection.POINTS)
def test_sigkill_at_every_step(store: Path, point: str) -> None:
    before = state_commits(store)
    proc = cli(*STEP, cwd=store, env={"STATEDIR_FAULT": point})
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    after = state_commits(store)
    committed = point == "after_commit"
    assert len(after) == len(before) + committed
    assert_store_equals_last_commit(store)
    assert material_labels(store, "r1") == (["paper_draft_v1"] if committed else [])
    again = cli(*STEP, cwd=store)
    assert again.returncode == 0, again.stderr
    assert material_labels(store, "r1") == (["paper_draft_v1", "paper_draft_v2"] if committed
                                            else ["paper_draft_v1"])
    assert_store_equals_last_commit(store)


def test_a_commit_whose_reason_git_cleaned_is_recognised_after_a_crash(store: Path) -> None:
    """`git commit` runs blank lines together; the journal compares the message it meant to
    commit with what landed, so a reason with a run of blank lines must not read as 'not landed'
    (which put the old files back under the new commit)."""
    before = state_commits(store)
    proc = cli("set", "r1", "topic", "after", "--reason", "first\n\n\n\nsecond", cwd=store,
               env={"STATEDIR_FAULT": "after_commit"})
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    assert len(state_commits(store)) == len(before) + 1
    assert cli("get", "r1", "topic", cwd=store).stdout.strip() == "after"
    assert_store_equals_last_commit(store)


@pytest.mark.parametrize("spec", ["before_write:enospc", "between_files:enospc", "after_write:enospc",
                                  "during_commit:git", "during_commit:enospc"])
def test_a_failing_write_or_git_changes_nothing(store: Path, spec: str) -> None:
    before = snapshot(store, objects=False)
    proc = cli(*STEP, cwd=store, env={"STATEDIR_FAULT": spec})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert '"code"' in proc.stdout and "Traceback" not in proc.stderr
    assert snapshot(store, objects=False) == before
    assert cli(*STEP, cwd=store).returncode == 0
    assert_store_equals_last_commit(store)


def test_sigkill_at_random_moments(store: Path) -> None:
    rng = random.Random(20261129)
    accepted = 0
    for _ in range(6):
        before = len(state_commits(store))
        proc = subprocess.Popen([sys.executable, "-m", "statedir", *STEP], cwd=store,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.0, 0.25))
        proc.kill()
        proc.wait()
        assert_store_equals_last_commit(store)  # the next command waits for a commit left running
        landed = len(state_commits(store)) - before
        assert landed in (0, 1)
        accepted += landed
        assert len(material_labels(store, "r1")) == accepted
    labels = material_labels(store, "r1")
    assert labels == sorted(f"paper_draft_v{n}" for n in range(1, accepted + 1))

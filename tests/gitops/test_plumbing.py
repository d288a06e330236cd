"""statedir.gitops.plumbing: the long-lived `git mktree --batch` a large repository's commit writes
its trees through is gone when the caller's work fails, its pipes closed."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from statedir.gitops.plumbing import Plumbing


class Refused(Exception):
    pass


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_failure_in_the_callers_work_leaves_no_git_and_no_pipe(repo: Path) -> None:
    writer = Plumbing(repo)
    with writer.tree_writer() as mktree:  # warm: whatever the first use opens for good
        mktree([])
    before = _open_descriptors()
    for _ in range(5):
        with pytest.raises(Refused), writer.tree_writer() as mktree:
            assert len(mktree([])) == 40  # git is running and answering
            raise Refused
    assert _open_descriptors() == before  # each git's three pipes closed, each git waited for

"""A transition's in-process commit hands libgit2 only the names it changes: its cost does not
grow with the number of runs beside it (issue 37, point 1)."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir.gitops import store_commit
from statedir.gitops.libgit import LibgitBackend
from tests.support.gitops import sh, store_of

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


def transition(repo: Path, objects: LibgitBackend) -> int:
    """One commit changing r0's state, adding a file and removing one (its folder emptied);
    returns the tree entries handed to libgit2 for it."""
    (repo / "state/runs/r0/state.yaml").write_text("run_id: r0\nchanged: 1\n")
    (repo / "state/runs/r0/notes.yaml").write_text("a: 1\n")
    (repo / "state/runs/r0/stages/1.yaml").unlink()
    before = objects.entries_edited
    store_commit.commit(repo, ["state/runs/r0/state.yaml", "state/runs/r0/notes.yaml", "state/runs/r0/stages/1.yaml"],
                        "t\n", objects=objects)
    return objects.entries_edited - before


def test_an_in_process_commit_hands_over_only_what_changed(tmp_path: Path) -> None:
    edited = []
    for runs in (3, 60):
        repo = tmp_path / f"runs-{runs}"
        store_of(repo, runs)
        edited.append(transition(repo, LibgitBackend(repo)))
        assert sh(repo, "status", "--porcelain") == ""  # the index and the work tree agree with the commit
        assert sh(repo, "diff", "--name-status", "HEAD~1", "HEAD").split() == [
            "A", "state/runs/r0/notes.yaml", "D", "state/runs/r0/stages/1.yaml", "M", "state/runs/r0/state.yaml"]
        assert len(sh(repo, "ls-tree", "HEAD", "state/runs/").splitlines()) == runs
        assert sh(repo, "fsck", "--strict", "--no-dangling") == ""
    assert edited[0] == edited[1] > 0
    assert edited[1] < 10  # the names on the changed paths, not the 60 runs'


def test_the_edited_tree_is_the_one_a_whole_listing_writes(tmp_path: Path) -> None:
    """The same change committed by git's plumbing (every tree on the path listed whole) and
    in-process (edited): the same root tree."""
    trees = []
    for way in ("plumbing", "libgit2"):
        repo = tmp_path / way
        store_of(repo, 5)
        if way == "plumbing":
            (repo / "state/runs/r0/state.yaml").write_text("run_id: r0\nchanged: 1\n")
            (repo / "state/runs/r0/notes.yaml").write_text("a: 1\n")
            (repo / "state/runs/r0/stages/1.yaml").unlink()
            store_commit.commit(repo, ["state/runs/r0/state.yaml", "state/runs/r0/notes.yaml",
                                       "state/runs/r0/stages/1.yaml"], "t\n", plumbing_above=0)
        else:
            transition(repo, LibgitBackend(repo))
        trees.append(sh(repo, "rev-parse", "HEAD^{tree}"))
    assert trees[0] == trees[1]

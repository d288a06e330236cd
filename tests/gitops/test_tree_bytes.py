"""A large tree edited as bytes (statedir.gitops.tree_bytes) is the tree `git mktree` writes of
the edited listing, and a commit through git's plumbing edits `runs/` that way: what it hands
to git does not grow with the runs beside the changed one (issue 37, point 1)."""
from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import plumbing, store_commit, tree_bytes
from tests.support.gitops import sh, store_of

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI

NAMES = ["a", "a.b", "a-b", "a0", "ab", "a_b", "b", "r1", "r10", "r1.yaml", "r1-x", "z", "é", "日本",
         "a b", "x100644 r1", "40000 r1", "a+b", "(r1)", "[r", "r*", "\x01", "\x7f", "r1 ", " r1"]  # spaces, digits:
# what an entry's own bytes hold (a mode, a space, a name) in a name, and what a pattern would read as its own


def mktree(repo: Path, listing: dict[str, tuple[str, str, str]]) -> str:
    text = "".join(f"{mode} {kind} {oid}\t{name}\0" for name, (mode, kind, oid) in listing.items() if mode)
    return subprocess.run(["git", "mktree", "-z"], cwd=repo, input=text.encode(), capture_output=True,
                          check=True).stdout.decode().strip()


def test_the_edit_is_the_tree_mktree_writes_of_the_edited_listing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    sh(tmp_path, "init", "-q", str(repo))
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=b"x\n", capture_output=True,
                          check=True).stdout.decode().strip()
    empty = mktree(repo, {})
    sub = mktree(repo, {"f": ("100644", "blob", blob)})
    kinds = [("100644", "blob", blob), ("100755", "blob", blob), ("40000", "tree", sub), ("120000", "blob", blob)]
    rng = random.Random(37)
    pool = NAMES + [f"r{n}" for n in range(200)]
    for _ in range(150):
        listing = {name: rng.choice(kinds) for name in rng.sample(pool, rng.randrange(0, 60))}
        tree = mktree(repo, listing)
        raw = subprocess.run(["git", "cat-file", "tree", tree], cwd=repo, capture_output=True, check=True).stdout
        changes = {name: rng.choice([*kinds, ("", "", "")]) for name in rng.sample(pool, rng.randrange(0, 12))}
        edited = tree_bytes.edit(raw, 20, changes)
        assert tree_bytes.scanned(raw, 20, changes) == edited  # one scan: what an edit of many names takes
        written = subprocess.run(["git", "hash-object", "-w", "-t", "tree", "--stdin"], cwd=repo, input=edited,
                                 capture_output=True, check=True).stdout.decode().strip()
        assert written == mktree(repo, {**listing, **changes}), (listing, changes)
    assert empty == mktree(repo, {})
    assert sh(repo, "fsck", "--strict", "--no-dangling") == ""


class Counted(plumbing.Plumbing):
    """git's plumbing, counting the entries it hands to `git mktree`."""

    handed = 0

    def tree_writer(self):  # type: ignore[no-untyped-def]
        import contextlib

        @contextlib.contextmanager
        def counting():  # type: ignore[no-untyped-def]
            with plumbing.Plumbing.tree_writer(self) as mktree:
                def write(entries):  # type: ignore[no-untyped-def]
                    Counted.handed += len(entries)
                    return mktree(entries)
                yield write
        return counting()


def test_a_commit_through_plumbing_hands_git_only_the_changed_names(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_bytes, "LARGE", 1 << 10)  # 60 runs' `runs/` is large here
    monkeypatch.setattr(store_commit, "Plumbing", Counted)
    handed, trees = [], []
    for runs in (3, 60):
        for way in ("edited", "listed"):
            repo = tmp_path / f"runs-{runs}-{way}"
            store_of(repo, runs)
            (repo / "state/runs/r0/state.yaml").write_text("run_id: r0\nchanged: 1\n")
            (repo / "state/runs/r0/notes.yaml").write_text("a: 1\n")
            (repo / "state/runs/r0/stages/1.yaml").unlink()
            new = repo / "state/runs/r5x/state.yaml"
            new.parent.mkdir(parents=True)
            new.write_text("run_id: r5x\n")
            paths = ["state/runs/r0/state.yaml", "state/runs/r0/notes.yaml", "state/runs/r0/stages/1.yaml",
                     "state/runs/r5x/state.yaml"]
            if way == "listed":
                monkeypatch.setattr(tree_bytes, "LARGE", 1 << 30)
            Counted.handed = 0
            store_commit.commit(repo, paths, "t\n", plumbing_above=0)
            monkeypatch.setattr(tree_bytes, "LARGE", 1 << 10)
            if way == "edited":
                handed.append(Counted.handed)
            trees.append(sh(repo, "rev-parse", "HEAD^{tree}"))
            assert sh(repo, "status", "--porcelain") == ""
            assert len(sh(repo, "ls-tree", "HEAD", "state/runs/").splitlines()) == runs + 1
            assert sh(repo, "fsck", "--strict", "--no-dangling") == ""
        assert trees[-1] == trees[-2]  # edited as bytes or listed whole: the same tree
    assert handed[1] <= handed[0] < 10  # the 57 runs more are not handed over (3 runs' `runs/` is listed)


@pytest.mark.parametrize("objects", ["plumbing", "libgit2"])
def test_a_directory_that_became_a_file_is_committed_as_the_file(tmp_path: Path, objects: str) -> None:
    """The emptied directory's removal does not take the place of the file of its name
    (tests/gitops/test_store_commit_property.py found it)."""
    from statedir.gitops.libgit import LibgitBackend

    repo = tmp_path / "repo"
    sh(tmp_path, "init", "-q", str(repo))
    for rel in ("d/a.yaml", "d/e/b.yaml", "z.yaml"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(rel)
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "base")
    import shutil

    shutil.rmtree(repo / "d")
    (repo / "d").write_text("now a file\n")
    store_commit.commit(repo, ["d/a.yaml", "d/e/b.yaml", "d"], "swap\n", plumbing_above=0,
                        objects=LibgitBackend(repo) if objects == "libgit2" else None)
    assert sh(repo, "ls-tree", "-r", "--name-only", "HEAD").split() == ["d", "z.yaml"]
    assert sh(repo, "status", "--porcelain") == ""
    assert sh(repo, "fsck", "--strict", "--no-dangling") == ""

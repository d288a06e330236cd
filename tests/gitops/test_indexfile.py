"""The in-process index update gives what `git update-index` gives, or declines and writes nothing."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import indexfile
from tests.support import indexes
from tests.support.indexes import agree, edit, populate, sh
from tests.support.util import diverge

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


def both(repo: Path, paths: list[str], width: int = 20) -> tuple[Path, Path]:
    """The index updated here (ours) and by git (theirs), each from a copy of the repository's."""
    return indexes.both(repo, paths, lambda ours: indexfile.update(repo / ".git", repo, ours, paths, width))


@pytest.mark.parametrize("version", [2, 3])
def test_changed_added_and_deleted_paths_agree_with_git(repo: Path, version: int) -> None:
    populate(repo)
    sh(repo, "update-index", "--index-version", str(version))
    (repo / "user.txt").write_text("staged by the user\n")
    sh(repo, "add", "user.txt")
    ours, theirs = both(repo, edit(repo))
    agree(repo, ours, theirs)
    sh(repo, "fsck", "--no-dangling")  # every blob the index names was written
    assert "user.txt" in sh(repo, "diff", "--cached", "--name-only", "HEAD", index=ours)  # the user's staging kept


def test_a_sha256_repository(tmp_path: Path) -> None:
    repo = tmp_path / "r256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    populate(repo)
    (repo / "d" / "b.yaml").write_text("changed\n")
    ours, theirs = both(repo, ["d/b.yaml"], width=32)
    agree(repo, ours, theirs)


def test_a_fresh_repository_without_an_index(repo: Path) -> None:
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a\n")
    index = repo / ".git" / "next"
    assert indexfile.update(repo / ".git", repo, index, ["s/a.yaml"], 20)
    assert sh(repo, "ls-files", "-s", index=index).split()[-1] == "s/a.yaml"


@pytest.mark.parametrize("setup", [
    ["update-index", "--index-version", "4"],
    ["update-index", "--skip-worktree", "a.txt"],
    ["update-index", "--assume-unchanged", "a.txt"],
    ["update-index", "--split-index"],
])
def test_unusual_indexes_are_left_to_git(repo: Path, setup: list[str]) -> None:
    populate(repo)
    sh(repo, *setup)
    (repo / "d" / "b.yaml").write_text("changed\n")
    before = (repo / ".git" / "index").read_bytes()
    assert not indexfile.update(repo / ".git", repo, repo / ".git" / "index", ["d/b.yaml"], 20)
    assert (repo / ".git" / "index").read_bytes() == before


def test_a_file_replacing_a_directory_is_left_to_git(repo: Path) -> None:
    populate(repo)
    shutil.rmtree(repo / "d" / "e")
    (repo / "d" / "e").write_text("now a file\n")
    assert not indexfile.update(repo / ".git", repo, repo / ".git" / "index", ["d/e"], 20)


def test_a_conflicted_index_is_left_to_git(repo: Path) -> None:
    populate(repo)
    diverge(repo, "a.txt")
    subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True)  # conflicts on a.txt
    (repo / "d" / "b.yaml").write_text("changed\n")
    assert not indexfile.update(repo / ".git", repo, repo / ".git" / "index", ["d/b.yaml"], 20)


def test_a_dead_writers_lock_names_it_from_the_first_moment(repo: Path) -> None:
    """The lock appears whole, holding its writer's mark (it is linked, not created then
    written): one left by a writer killed right after taking it names it and is released;
    a lock of git's own (empty, or the index it is writing) is never taken for statedir's."""
    from statedir.gitops import index_lock

    gitdir = repo / ".git"
    (gitdir / "statedir").mkdir()
    lock = gitdir / "index.lock"
    lock.write_bytes(b"DIRC")  # a git writing the index
    assert not index_lock.release_dead_index_lock(gitdir) and lock.exists()
    gone = subprocess.Popen(["true"])
    gone.wait()
    lock.write_bytes(index_lock.MARK + f"{gone.pid}\n".encode())
    assert index_lock.release_dead_index_lock(gitdir) and not lock.exists()
    lock.write_bytes(index_lock.MARK + f"{os.getpid()}\n".encode())  # a live writer's
    assert not index_lock.release_dead_index_lock(gitdir) and lock.exists()
    lock.unlink()
    with index_lock.held(gitdir, 1.0):
        assert lock.read_bytes() == index_lock.MARK + f"{os.getpid()}\n".encode()
        assert list((gitdir / "statedir").glob("index.lock.*")) == []  # the file it was linked from is gone
    assert not lock.exists()


def test_a_dead_writers_half_written_index_goes_with_its_lock(repo: Path) -> None:
    """A statedir from before the mark, killed while it held the index, leaves git's index.lock,
    its owner record and perhaps the next index it was writing: the next statedir releases all three."""
    from statedir.gitops import index_lock

    gitdir = repo / ".git"
    gone = subprocess.Popen(["true"])
    pid = gone.pid  # waited for below: its pid then names no one
    lock = gitdir / "index.lock"
    lock.write_text("")
    st = os.stat(lock)
    (gitdir / "statedir").mkdir()
    (gitdir / "statedir" / index_lock.OWNER).write_text(f"{pid} {st.st_ino} {st.st_ctime_ns}\n")
    half = gitdir / "statedir" / f"index.next.{pid}.tmp"
    half.write_bytes(b"DIRC")
    gone.wait()
    assert index_lock.release_dead_index_lock(gitdir)
    assert not lock.exists() and not half.exists()


def test_an_object_directory_removed_by_gc_is_made_again(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git gc` (prune-packed) removes emptied object directories: one gone between statedir's
    mkdir and its write of the object is made again, not a failed transition."""
    populate(repo)
    sh(repo, "gc", "-q")  # every object packed: the fan-out directories are gone
    (repo / "d" / "b.yaml").write_text("changed again\n")
    write_bytes = Path.write_bytes
    removed = []

    def gc_meanwhile(self: Path, data: bytes) -> int:
        if self.name.startswith("tmp_obj_statedir_") and not removed:
            self.parent.rmdir()  # as prune-packed does, between the mkdir and the write
            removed.append(self.parent)
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", gc_meanwhile)
    ours, theirs = both(repo, ["d/b.yaml"])
    assert removed
    agree(repo, ours, theirs)
    assert sh(repo, "fsck", "--strict", "--no-dangling") == ""


def test_a_linked_work_tree_writes_its_objects_where_the_repository_keeps_them(repo: Path) -> None:
    """A store on a branch of its own is a linked work tree: its own index, the shared objects."""
    populate(repo)
    linked = repo.parent / "linked"
    sh(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    gitdir = repo / ".git" / "worktrees" / "linked"
    (linked / "d" / "b.yaml").write_text("changed in the linked work tree\n")
    (linked / "new.yaml").write_text("added there\n")
    ours, theirs = gitdir / "ours", gitdir / "theirs"
    shutil.copyfile(gitdir / "index", ours)
    shutil.copyfile(gitdir / "index", theirs)
    blobs = indexfile.update(gitdir, linked, ours, ["d/b.yaml", "new.yaml"], 20)
    assert blobs is not None
    assert not (gitdir / "objects").exists()  # not beside the linked work tree's index
    sh(linked, "update-index", "--add", "-z", "--stdin", index=theirs, stdin="d/b.yaml\0new.yaml\0")
    agree(linked, ours, theirs)
    assert sh(repo, "cat-file", "-p", blobs["new.yaml"]) == "added there\n"

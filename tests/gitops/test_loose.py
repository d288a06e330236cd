"""Loose objects statedir writes and reads itself are git's own; where it may not, or where an
object is packed, git does the work."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import loose, store_commit, tree_bytes
from tests.support.indexes import populate, sh

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git


@pytest.mark.parametrize("level", [0, 1])
def test_what_it_writes_git_reads(repo: Path, level: int) -> None:
    blob = loose.write(repo / ".git", b"blob", b"hello\n", 20, level).hex()
    assert blob == sh(repo, "hash-object", "--stdin", stdin="hello\n").strip()
    tree = loose.write(repo / ".git", b"tree", tree_bytes.entry("100644", "a.txt", blob), 20, level).hex()
    assert sh(repo, "cat-file", "-p", tree) == f"100644 blob {blob}\ta.txt\n"
    assert loose.read(repo / ".git", tree) == (b"tree", tree_bytes.entry("100644", "a.txt", blob))
    sh(repo, "fsck", "--strict", "--unreachable")


def test_the_trees_of_a_commit_read_loose_and_not_when_packed(repo: Path) -> None:
    populate(repo, ("a/b/c.txt", "a/d.txt", "e.txt"))
    head = sh(repo, "rev-parse", "HEAD").strip()
    dirs = ["a/b", "a", "", "missing/dir", "e.txt"]
    found = loose.trees_at(repo / ".git", head, dirs, 20)
    assert found is not None
    for directory in dirs:
        spec = f"{head}:{directory}" if directory else f"{head}^{{tree}}"
        kind = subprocess.run(["git", "cat-file", "-t", spec], cwd=repo, capture_output=True, text=True).stdout.strip()
        want = subprocess.run(["git", "cat-file", "tree", spec], cwd=repo, capture_output=True).stdout \
            if kind == "tree" else b""
        assert found[directory] == want, directory
    sh(repo, "gc", "-q")
    assert loose.trees_at(repo / ".git", head, dirs, 20) is None  # packed: the caller asks git


def gits(trace: Path) -> list[str]:
    names = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "cmd_name":
            names.append(event["name"])
    return names


@pytest.mark.parametrize("case", ["loose", "packed", "shared"])
def test_a_plumbing_commit_runs_git_only_for_what_it_must(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """Loose parent trees: no git lists or writes a tree. Packed: git lists them, statedir writes.
    A group-shared repository: git does both (its objects want the group's permissions)."""
    (repo / "s" / "r").mkdir(parents=True)
    for n in range(3):
        (repo / "s" / "r" / f"{n}.yaml").write_text(f"n: {n}\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "base")
    if case == "packed":
        sh(repo, "gc", "-q")
    if case == "shared":
        sh(repo, "config", "core.sharedRepository", "group")
    else:  # the first commit of git's own: its trees are loose once statedir commits on it
        (repo / "s" / "r" / "0.yaml").write_text("n: first\n")
        store_commit.commit(repo, ["s/r/0.yaml"], "first\n", plumbing_above=0)
        if case == "packed":
            sh(repo, "gc", "-q")
    (repo / "s" / "r" / "1.yaml").write_text("n: changed\n")
    (repo / "s" / "new.yaml").write_text("added\n")
    (repo / "s" / "r" / "2.yaml").unlink()
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    store_commit.commit(repo, ["s/r/1.yaml", "s/new.yaml", "s/r/2.yaml"], "second\n", plumbing_above=0)
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    listed = {"loose": [], "packed": ["cat-file"], "shared": ["cat-file", "mktree"]}[case]
    want = ["hash-object", *listed, "commit-tree"]
    ran = [name for name in gits(trace) if name not in ("update-index", "update-ref")]
    assert ran == want
    assert sh(repo, "ls-tree", "-r", "--name-only", "HEAD").split() == ["s/new.yaml", "s/r/0.yaml", "s/r/1.yaml"]
    assert sh(repo, "status", "--porcelain") == ""
    sh(repo, "fsck", "--strict")
    if case == "shared":
        return
    objects = repo / ".git" / "objects"
    tree = sh(repo, "rev-parse", "HEAD:s").strip()
    assert (objects / tree[:2] / tree[2:]).stat().st_mode & 0o777 == 0o444
    assert os.listdir(objects / tree[:2])  # written loose by statedir, read back by git above


def test_writers_in_threads_of_one_process_do_not_share_a_temporary_file(repo: Path) -> None:
    import threading

    def write(offset: int) -> None:
        for n in range(150):
            loose.write(repo / ".git", b"blob", f"{offset} {n}\n".encode(), 20)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sh(repo, "fsck", "--strict", "--unreachable")
    assert sh(repo, "count-objects").startswith("450 objects")


def test_an_object_there_already_is_made_fresh_as_git_does(repo: Path) -> None:
    """An old unreachable copy would be pruned by a `git gc` before the commit naming it lands."""
    oid = loose.write(repo / ".git", b"blob", b"again\n", 20).hex()
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    os.utime(path, (1_000_000_000, 1_000_000_000))
    loose.write(repo / ".git", b"blob", b"again\n", 20)
    assert path.stat().st_mtime > 1_000_000_000


def test_a_new_object_folder_takes_the_mode_of_objects(repo: Path) -> None:
    """A group's repository, made so by a config file statedir does not read, has `objects/`
    group-writable and set-group-id: a folder statedir makes there is the same."""
    objects = repo / ".git" / "objects"
    objects.chmod(0o2775)
    oid = loose.write(repo / ".git", b"blob", b"a group's\n", 20).hex()
    assert (objects / oid[:2]).stat().st_mode & 0o7777 == 0o2775

"""Indexes compared with git's own: what the in-process index writers make against what `git
update-index` makes of the same paths (tests/gitops/test_indexfile.py, test_index_splice.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path


def sh(repo: Path, *args: str, index: Path | None = None, stdin: str | None = None) -> str:
    env = {**os.environ, **({"GIT_INDEX_FILE": str(index)} if index else {})}
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True, env=env,
                          input=stdin).stdout


def copies(repo: Path) -> tuple[Path, Path]:
    """Two copies of the repository's index: ours (for statedir's writer) and theirs (for git's)."""
    ours, theirs = repo / ".git" / "ours", repo / ".git" / "theirs"
    shutil.copyfile(repo / ".git" / "index", ours)
    shutil.copyfile(repo / ".git" / "index", theirs)
    return ours, theirs


def by_git(repo: Path, index: Path, paths: list[str]) -> None:
    sh(repo, "update-index", "--add", "--remove", "-z", "--stdin", index=index, stdin="".join(p + "\0" for p in paths))


def agree(repo: Path, ours: Path, theirs: Path) -> None:
    """The two indexes list the same entries (stat data and all), show the same status and
    write the same tree (git's write-tree trusts a cache-tree: a stale one shows here)."""
    for args in (("ls-files", "-s", "--debug"), ("status", "--porcelain", "-uall"), ("write-tree",)):
        assert sh(repo, *args, index=ours) == sh(repo, *args, index=theirs), args


def both(repo: Path, paths: list[str], write: Callable[[Path], object]) -> tuple[Path, Path]:
    """The index updated by `write` (ours, which must not decline) and by git (theirs), each from
    a copy of the repository's."""
    ours, theirs = copies(repo)
    assert write(ours)
    by_git(repo, theirs, paths)
    return ours, theirs


def populate(repo: Path, rels: tuple[str, ...] = ("a.txt", "d/b.yaml", "d/c.yaml", "d/e/f.yaml", "z.txt", "d-x.txt",
                                                  "d.txt")) -> None:
    """Files (by default, names that sort around a directory's: 'd-x.txt' < 'd/...' < 'd.txt' in
    git's index order), each holding its name, committed, so the index holds a cache tree (TREE)."""
    for rel in rels:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(f"{rel}\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "base")


def edit(repo: Path) -> list[str]:
    """A change, additions around a directory's place in the order, first and last, a deletion."""
    (repo / "d" / "b.yaml").write_text("changed\n")
    (repo / "d" / "new.yaml").write_text("added\n")
    (repo / "d" / "e" / "g h.yaml").write_text("a name with a space, and a longer one to pad differently\n")
    (repo / "d" / "c.yaml").unlink()
    (repo / "d" / "x.sh").write_text("#!/bin/sh\n")
    (repo / "d" / "x.sh").chmod(0o755)
    (repo / "0first.txt").write_text("first\n")
    (repo / "zz" / "last.txt").parent.mkdir()
    (repo / "zz" / "last.txt").write_text("last\n")
    (repo / "d-a.txt").write_text("between d-x.txt's neighbours\n")
    return ["d/b.yaml", "d/new.yaml", "d/e/g h.yaml", "d/c.yaml", "d/x.sh", "0first.txt", "zz/last.txt", "d-a.txt"]

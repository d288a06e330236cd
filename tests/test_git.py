"""Commits built in the private index, by porcelain or by plumbing: only the given paths land."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir import git


def sh(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("plumbing_above", [0, git.PLUMBING_INDEX_BYTES])
def test_commit_takes_only_its_paths(repo: Path, plumbing_above: int) -> None:
    (repo / "user.txt").write_text("base\n")
    sh(repo, "add", "user.txt")
    sh(repo, "commit", "-q", "-m", "base")
    (repo / "user.txt").write_text("staged\n")
    sh(repo, "add", "user.txt")
    (repo / "user.txt").write_text("unstaged\n")
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    first = git.commit(repo, ["s/a.yaml"], git.message("one", "r1", "me", "stage"), author="me",
                       plumbing_above=plumbing_above)
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    second = git.commit(repo, ["s/a.yaml"], git.message("two", "r1", "me", "stage"), author="me",
                        plumbing_above=plumbing_above)
    assert sh(repo, "rev-parse", "HEAD").strip() == second
    assert sh(repo, "rev-parse", "HEAD~1").strip() == first
    assert sh(repo, "show", "--name-only", "--format=", "HEAD").split() == ["s/a.yaml"]
    assert "Statedir-Action: stage" in sh(repo, "log", "-1", "--format=%B")
    assert sh(repo, "log", "-1", "--format=%an").strip() == "me"
    status = sh(repo, "status", "--porcelain")
    assert status == "MM user.txt\n"  # the user's staged and unstaged work, as it was
    assert "commit: two" in sh(repo, "reflog", "-1")


def test_a_lock_held_by_the_users_git_is_waited_for(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from statedir.errors import GitError

    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    git.commit(repo, ["s/a.yaml"], git.message("one", "r1", "me", "stage"))
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    monkeypatch.setattr(git, "LOCK_RETRY_SECONDS", 0.0)
    with pytest.raises(GitError, match="index.lock"):
        git.commit(repo, ["s/a.yaml"], git.message("two", "r1", "me", "stage"))
    monkeypatch.setattr(git, "LOCK_RETRY_SECONDS", 30.0)
    threading.Timer(0.3, lock.unlink).start()
    git.commit(repo, ["s/a.yaml"], git.message("two", "r1", "me", "stage"))
    assert sh(repo, "log", "-1", "--format=%s").strip() == "two"


def test_an_unreadable_private_index_is_rebuilt(repo: Path) -> None:
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    git.commit(repo, ["s/a.yaml"], git.message("one", "r1", "me", "stage"), plumbing_above=0)
    private = next((repo / ".git" / "statedir").glob("index-*[!d]"))
    private.write_bytes(b"DIRC garbage")
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    git.commit(repo, ["s/a.yaml"], git.message("two", "r1", "me", "stage"), plumbing_above=0)
    assert sh(repo, "show", "HEAD:s/a.yaml") == "a: 2\n"

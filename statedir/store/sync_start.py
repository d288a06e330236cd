"""Where a sync started: the branch's commit, the index file's bytes and the tracked files the
work tree lacks. A sync that fails puts all three back, whatever it merged before it failed
(a first merge whose push the remote rejected included), so "nothing was changed" is true.

A sync that is killed cannot put anything back itself: statedir.store.sync_journal saves where
it started on disk, and the next command puts it back with `restore`.

git's own undos are not enough: `merge --abort` and `reset --keep` reset the index entries of
files the merge never touched, and so drop what the user staged. Here the index file itself is
put back, and only the files whose index entries the merge changed are rewritten: git writes
a file only where the work tree held its index entry (or nothing), so that is what they held.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from statedir.errors import GitError
from statedir.gitops import git, index_lock

if TYPE_CHECKING:
    from statedir.store.disk import Disk


class SyncStart(NamedTuple):  # a NamedTuple, not a dataclass: every lock's recovery check imports this module
    head: str | None
    index: bytes | None  # None: the repository had no index file
    missing: frozenset[str]  # tracked files deleted from the work tree (git may bring them back)


def _paths(raw: bytes) -> list[str]:
    return [p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p]


def take(store: Disk) -> SyncStart:
    """The branch, the index and the work tree's deletions as they are now."""
    index = git.git_dir(store.worktree) / "index"
    try:
        saved: bytes | None = index.read_bytes()
    except FileNotFoundError:
        saved = None
    missing = git.run(store.worktree, "ls-files", "-d", "-z", "--full-name", ":/").stdout
    return SyncStart(git.head(store.worktree), saved, frozenset(_paths(missing)))


def _entries(store: Disk, env: dict[str, str] | None) -> dict[str, list[str]]:
    """path -> its index entries ("mode oid stage"), of the index `env` names."""
    out = git.run(store.worktree, "ls-files", "--stage", "-z", "--full-name", ":/", env=env).stdout
    entries: dict[str, list[str]] = {}
    for line in _paths(out):
        meta, path = line.split("\t", 1)
        entries.setdefault(path, []).append(meta)
    return entries


def restore(store: Disk, point: SyncStart) -> None:
    """Put the branch, the index and the files a merge wrote back as they were at `point`."""
    worktree, gitdir = store.worktree, git.git_dir(store.worktree)
    if (gitdir / "MERGE_HEAD").exists():
        git.run(worktree, "merge", "--quit")  # forget the merge; index and files are put back below
    head = git.head(worktree)
    if head != point.head:
        if point.head is None:
            git.run(worktree, "update-ref", "-d", "HEAD")
        else:
            git.run(worktree, "update-ref", "-m", "statedir sync: back where it started", "HEAD", point.head)
    if point.index is None:
        (gitdir / "index").unlink(missing_ok=True)
        return
    try:
        if (gitdir / "index").read_bytes() == point.index:
            return
    except FileNotFoundError:
        pass
    index = index_lock.Index(gitdir)
    try:
        with index_lock.held(gitdir, git.LOCK_RETRY_SECONDS):
            index.start()  # the next index starts as a link of the current one
            now = _entries(store, index.env)
            index.next.unlink(missing_ok=True)
            with open(index.next, "wb") as out:
                out.write(point.index)
                out.flush()
                os.fsync(out.fileno())
            before = _entries(store, index.env)
            changed = sorted(p for p in now.keys() | before.keys() if now.get(p) != before.get(p))
            _rewrite(store, changed, before, point.missing, index.env)
            index.publish()
    finally:
        index.discard()


def _rewrite(store: Disk, changed: list[str], before: dict[str, list[str]], missing: frozenset[str],
             env: dict[str, str]) -> None:
    """Each changed file as it was: its entry's content, or absent (a file the merge added goes
    with the folders it left empty)."""
    top = Path(store.worktree)
    for rel in changed:
        path = top / rel
        if path.is_symlink() or path.is_file():
            path.unlink()
    for rel in changed:
        if rel in before:
            continue
        parent = (top / rel).parent
        while parent != top and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    wanted = [rel for rel in changed if rel in before and rel not in missing]
    if wanted:
        git.run(store.worktree, "checkout-index", "-f", "-z", "--stdin", env=env,
                stdin=b"\0".join(rel.encode("utf-8", "surrogateescape") for rel in wanted) + b"\0")


def put_back(store: Disk, point: SyncStart, failure: BaseException) -> None:
    """restore() after `failure`; if that fails too, say where the branch was."""
    try:
        restore(store, point)
    except (GitError, OSError) as exc:
        reason = exc.message if isinstance(exc, GitError) else str(exc)
        raise GitError(f"sync failed ({failure}) and could not put the branch and index back ({reason}); "
                       f"the branch was at {point.head}: `git reset --keep {point.head}`, then re-stage your "
                       "changes", start=point.head) from failure


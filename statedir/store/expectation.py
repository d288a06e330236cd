"""Compare-and-swap on what a write is about: the caller names the commit it last read (`--expect
REV`; MCP `expect_head`), and the write is refused with HEAD_MOVED only where the files it is about
(a run's folder, a bus session's file; the whole store where a write names none) changed after
REV. Commits elsewhere (another run, a bus session, the user's own files) never make REV stale.

The store checks it as a writer takes the lock (`Store.locked`), so the check, the decision and
the commit are one critical section; a refusal has changed nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from statedir.errors import GitError, HeadMoved, InvalidValue
from statedir.gitops import git, objects

if TYPE_CHECKING:
    from statedir.store.disk import Disk


def check(store: Disk, rev: str, scope: str) -> None:
    """HEAD_MOVED unless the store's `scope` (a store-relative folder or file; "" the whole store)
    is the same at HEAD as in commit `rev`; INVALID_VALUE where `rev` names no commit."""
    head = git.head(store.worktree)
    if head is None:
        raise InvalidValue(f"no commit {rev!r}: the repository has no commits yet", rev=rev)
    seen, before, after = _ids(store, rev, head, _path(store, scope))
    if before != after:
        what = scope or "the store"
        raise HeadMoved(f"{what} changed after {seen[:12]} (HEAD is now {head[:12]}): read it again, then retry "
                        "expecting the new head", expected=rev, head=head, changed=scope or ".")


def fingerprint(store: Disk, scope: str, head: str) -> str | None:
    """The object id of the store's `scope` at commit `head` (None where absent): it changes
    exactly when a write `check` guards would be refused."""
    return _ids(store, head, head, _path(store, scope))[2]


def _path(store: Disk, scope: str) -> str:
    return store.git_path(scope).rstrip("/") if scope else ("" if store.prefix == "." else store.prefix)


def _ids(store: Disk, rev: str, head: str, path: str) -> tuple[str, str | None, str | None]:
    if store.objects is not None:  # in-process (the MCP server): no git process
        try:
            return store.objects.ids_at(rev, head, path)
        except GitError:
            pass  # git reads revisions libgit2 does not (or says why it cannot)
    return objects.ids_at(store.worktree, rev, head, path)


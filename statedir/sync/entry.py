"""`statedir sync`'s start: which remote and branch, the store lock, and whether anything moved.
Where nothing did, this is the whole sync (statedir.api.syncing answers `up_to_date` and leaves
the record the next plain sync answers from); where the remote's branch or this one moved,
statedir.sync.moved runs under the same hold of the lock, and it alone imports the exchange
(fetch, merge, validate, verify, push, and its undo: about 75 modules a no-op sync never loads).

"Did anything move" costs one git process, `git ls-remote` (which fetches nothing and writes no
ref): the branch, its upstream, the remote's URL, the remote-tracking ref and the commit
verified last are read from the repository's files where they say it plainly
(statedir.gitops.config_file, git.head_branch, git.ref_commit), and git is asked otherwise.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from statedir.errors import GitError
from statedir.gitops import config_file, git, git_owner
from statedir.store.store import Store
from statedir.sync import unmoved_record
from statedir.sync.remote import current_branch, remote_dir, result, target

VERIFIED = "statedirVerified"  # branch.<name>.statedirVerified: statedir.sync.verified.KEY, read without it


class Start:
    """A sync holding the lock: its remote, branch and URL; HEAD where the remote's branch is this
    one's HEAD and its remote-tracking ref already (None: something is to be exchanged); and the
    commit verified last on the branch, where HEAD is given."""

    def __init__(self, name: str, branch: str, url: str, head: str | None, verified: str | None) -> None:
        self.name, self.branch, self.url, self.head, self.verified = name, branch, url, head, verified

    @property
    def still(self) -> bool:
        """Nothing moved: nothing to merge or push, and no commit a plain `git pull` took unverified."""
        return self.head is not None and self.verified == self.head


def _nothing_to_exchange(store: Store, name: str, branch: str, url: str) -> str | None:
    """HEAD, where the remote's branch is this one's HEAD and its remote-tracking ref already:
    asked of the remote with `git ls-remote` (it fetches nothing and writes no ref), so a sync with
    nothing to merge or push changes nothing and neither scans the work tree nor takes a
    checkpoint (each reads every tracked file's status: most of a no-op's time in a large store)."""
    ours = git.head(store.worktree)
    if ours is None or git.ref_commit(store.worktree, f"refs/remotes/{name}/{branch}") != ours:
        return None
    proc = git.run(remote_dir(store, name, url), "ls-remote", "--heads", name, f"refs/heads/{branch}", check=False)
    listed = [line.split("\t") for line in proc.stdout.decode(errors="replace").splitlines()]
    return ours if proc.returncode == 0 and listed == [[ours, f"refs/heads/{branch}"]] else None


@contextlib.contextmanager
def started(store: Store, remote: str | None, timeout: float | None = None) -> Iterator[Start]:
    """Hold the store lock (and the record of the gits this process runs) for the whole sync,
    refused where a git merge, rebase or the like is in progress; yields where the sync stands."""
    name, branch, url = target(store, remote)
    with store.locked(timeout), git_owner.running(git.git_dir(store.worktree), store.worktree):
        for marker, operation in git.IN_PROGRESS:
            if (git.git_dir(store.worktree) / marker).exists():
                raise GitError(f"{operation} is in progress; finish or abort it before sync", operation=marker)
        head = _nothing_to_exchange(store, name, branch, url)  # no fetch, no scan of the work tree
        last = None if head is None else \
            config_file.value(store.worktree, f"branch.{current_branch(store)}.{VERIFIED}", own=True)
        yield Start(name, branch, url, head, last)


def up_to_date(store: Store, start: Start) -> dict[str, Any]:
    """The answer of a sync that exchanged nothing, once the lock is released; the next plain sync
    answers from what this one read, while it still holds (statedir.sync.unmoved)."""
    assert start.head is not None
    unmoved_record.remember(store, start.name, start.branch, start.url, start.head)
    return result(start.name, start.branch, "up_to_date", start.head, 1, pushed=False)

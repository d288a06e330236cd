"""`statedir sync`'s start: which remote and branch, the store lock, and the answer where nothing
moved. The exchange (statedir.sync.exchange: fetch, merge, validate, verify, push, and its undo)
is loaded only where the remote's branch or this one moved.

"Did anything move" costs one git process, `git ls-remote` (which fetches nothing and writes no
ref): the branch, its upstream, the remote's URL, the remote-tracking ref and the commit
verified last are read from the repository's files where they say it plainly
(statedir.gitops.config_file, git.head_branch, git.ref_commit), and git is asked otherwise.
"""
# Lazy imports: statedir.sync.exchange (with the merge, the replay, validation and the research ledger, about
#   75 modules): loaded only where the remote's branch or this one moved; a no-op sync never loads it.
from __future__ import annotations

from typing import Any

from statedir.errors import GitError
from statedir.gitops import config_file, git, git_owner
from statedir.store.store import Store
from statedir.sync import unmoved_record, verified
from statedir.sync.remote import current_branch, remote_dir, result, target

VERIFIED = "statedirVerified"  # branch.<name>.statedirVerified: statedir.sync.verified


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


def sync(store: Store, remote: str | None, *, actor: str, timeout: float | None = None,
         replay: bool = False) -> dict[str, Any]:
    """{remote, branch, status: up_to_date|pushed|fast_forward|merged|replayed, pushed, commit, attempts,
    summary}; with `replay`, a refused merge is resolved by replaying (statedir.sync.replay), and
    the result says what was replayed, refused and skipped, and where the originals are kept."""
    name, branch, url = target(store, remote)
    with store.locked(timeout), git_owner.running(git.git_dir(store.worktree), store.worktree):
        for marker, operation in git.IN_PROGRESS:
            if (git.git_dir(store.worktree) / marker).exists():
                raise GitError(f"{operation} is in progress; finish or abort it before sync", operation=marker)
        head = _nothing_to_exchange(store, name, branch, url)
        if head is None:
            from statedir.sync import exchange

            return exchange.exchange(store, name, branch, url, actor=actor, replay=replay)
        # no fetch, no scan of the work tree: nothing changes
        last = config_file.value(store.worktree, f"branch.{current_branch(store)}.{VERIFIED}", own=True)
        if last != head:  # what a plain `git pull` took since the commit verified last is checked
            verified.check_taken(store, name, branch, head)
    # the next plain sync answers from what this one read, while it still holds (statedir.sync.unmoved)
    unmoved_record.remember(store, name, branch, url, head)
    return result(name, branch, "up_to_date", head, 1, pushed=False)

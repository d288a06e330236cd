"""What this clone has verified of the history it took from remotes: the whole branch once, when
`init --branch` checks a remote's store out (`vet`), then only what came after (`sync`). The
commit verified last is recorded in the repository's config (`branch.<name>.statedirVerified`,
which goes with the branch when git deletes it); commits this clone made itself are its own, and
only what a remote holds is held against it. A sync where nothing moved reads the commit verified
last without this module (statedir.sync.entry), so it loads no history.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.errors import MergeRefused
from statedir.gitops import git, worktrees
from statedir.hints import HINT, Hint
from statedir.history import verify
from statedir.store.store import Store

KEY = "statedirVerified"


def _branch(store: Store) -> str | None:
    return worktrees.current_branch(store.worktree)


def recorded(store: Store) -> str | None:
    """The commit verified last on the store's branch, where it is still in the branch's history."""
    branch = _branch(store)
    if branch is None:
        return None
    value = git.run(store.worktree, "config", "--get", f"branch.{branch}.{KEY}", check=False).stdout.decode().strip()
    if not value or git.run(store.worktree, "merge-base", "--is-ancestor", value, "HEAD", check=False).returncode:
        return None  # never recorded, or a branch made again since (deleted, taken from a remote anew)
    return value


def record(store: Store, commit: str | None) -> None:
    """Note `commit` (the branch's tip, verified or this clone's own) as verified."""
    branch = _branch(store)
    if branch is not None and commit and commit != recorded(store):
        git.run(store.worktree, "config", f"branch.{branch}.{KEY}", commit, check=False)


def _commits(store: Store, *revs: str) -> set[str]:
    return set(git.run(store.worktree, "rev-list", *revs).stdout.decode().split())


def _since(store: Store, ours: str | None, theirs: str | None) -> str | None:
    """Where the check of what came from `theirs` starts: `ours` (HEAD before the merge), or the
    commit verified last where the branch holds commits of the remote's after it that no check
    saw (a plain `git pull`)."""
    last = recorded(store)
    if last is None or ours is None or theirs is None:
        return ours
    base = git.run(store.worktree, "merge-base", ours, theirs, check=False).stdout.decode().strip()
    if not base or git.run(store.worktree, "merge-base", "--is-ancestor", base, last, check=False).returncode == 0:
        return ours
    return last


def taken(store: Store, ours: str | None, theirs: str | None) -> list[dict[str, Any]]:
    """The findings in history this branch took from a remote and has not verified: what a merge
    or fast-forward from `ours` brought (and the merge itself), and what reached the branch from
    `theirs` after the commit verified last (a plain `git pull`). A finding in this clone's own
    commits is its own to review, not held against the remote."""
    since = _since(store, ours, theirs)
    if since is None or since == git.head(store.worktree):
        return []
    remote = (_commits(store, theirs, f"^{since}") if theirs else set()) | \
        (_commits(store, "HEAD", f"^{ours}") if ours else set())
    if not remote:
        return []
    return [f for f in verify.verify(store, None, since, taken=True)["findings"] if f["commit"] in remote]


def vet(directory: Path) -> None:
    """`init --branch` checking a branch out: the history its remote holds (all of it, the first
    time), verified; a finding refuses the attach, naming each commit and what it broke."""
    store = Store(directory)
    branch = _branch(store)
    tips = worktrees.remote_branches(store.worktree, branch) if branch else []
    head = git.head(store.worktree)
    if tips and head:
        since = recorded(store)
        found = verify.verify(store, None, since)["findings"]
        remote = set().union(*(_commits(store, f"refs/remotes/{tip}", *([f"^{since}"] if since else []))
                               for tip in tips))
        found = [f for f in found if f["commit"] in remote]
        if found:
            first = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise MergeRefused(f"the store on {tips[0]} does not verify: {first['commit'][:10]} {first['kind']} "
                               f"{first['file'] or '-'}: {first['message']}{more}; nothing was changed (the store "
                               f"was not checked out). `{HINT}` in a clone of it lists every finding",
                               hint=Hint("verify"), conflicts=[], findings=found, branch=branch)
    record(store, head)


def check_taken(store: Store, name: str, branch: str, head: str) -> None:
    """A sync that exchanged nothing: what a plain `git pull` took since the commit verified last,
    verified (and refused); HEAD recorded as verified."""
    if recorded(store) != head:
        refuse_taken(store, name, branch, taken(store, head, head))
        record(store, head)


def refuse_taken(store: Store, name: str, branch: str, findings: list[dict[str, Any]]) -> None:
    if findings:
        raise MergeRefused(f"history from {name}/{branch} does not verify: {findings[0]['commit'][:10]} "
                           f"{findings[0]['kind']} {findings[0]['file'] or '-'}: {findings[0]['message']}; "
                           "nothing was changed", conflicts=[], findings=findings)

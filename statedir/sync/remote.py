"""Which remote and branch a sync exchanges with and where git runs to reach it (the result a sync
reports is statedir.sync.outcome's): read from the repository's files where they say it plainly
(statedir.gitops.config_file, git.head_branch), asked of git otherwise."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.errors import GitError
from statedir.gitops import config_file, git, worktrees
from statedir.store.store import Store
from statedir.sync.outcome import result  # noqa: F401 (the sync's result: entry's and exchange's)


def _config(store: Store, name: str, values: Any, *, own: bool = False) -> str:
    return config_file.value(store.worktree, name, own=own, values=values) or ""


def current_branch(store: Store) -> str:
    branch = git.head_branch(store.worktree)
    if branch is None:  # HEAD does not say plainly: git does
        head = git.run(store.worktree, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        branch = head.stdout.decode().strip() if head.returncode == 0 else False
    if branch is False or not branch:
        raise GitError("HEAD is detached: sync merges into and pushes a branch; `git switch BRANCH` first")
    return str(branch)


def remote_url(store: Store, name: str, values: Any = config_file.ASK) -> str | None:
    """Remote `name`'s URL as `git remote get-url` prints it, None where there is no such remote:
    from the repository's file where it sets the URL once and rewrites none (insteadOf)."""
    values = config_file.read(store.worktree) if values is config_file.ASK else values
    rewrites = values is None or any(k.endswith(("insteadof", "pushinsteadof")) for k in values)
    found = config_file.ASK if rewrites else config_file.get(values, f"remote.{name}.url")
    if isinstance(found, str) and found:
        return found
    proc = git.run(store.worktree, "remote", "get-url", name, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def remote_dir(store: Store, name: str, url: str | None = None) -> Path:
    """Where git runs to reach remote `name`: the store's work tree, except where the remote is a
    relative path and the store is a linked work tree (`init --branch`). git takes such a path from
    the work tree it runs in, and the user added it from the main one: that is where it is meant."""
    url = (remote_url(store, name) or "") if url is None else url
    local_path = "://" not in url and ("/" in url.partition(":")[0] or ":" not in url)  # git's test, not scp-like
    if not url or not local_path or url.startswith("/"):
        return store.worktree
    bound = worktrees.binding(store.worktree)
    if bound is None or bound[1].resolve() != store.worktree.resolve():
        return store.worktree
    return worktrees.main_worktree(store.worktree)


def target(store: Store, remote: str | None) -> tuple[str, str, str]:
    """(remote, branch, the remote's URL): the branch's upstream, else `origin` and the branch's own name."""
    branch = current_branch(store)
    values = config_file.read(store.worktree)
    upstream_remote = _config(store, f"branch.{branch}.remote", values)
    merge_ref = _config(store, f"branch.{branch}.merge", values)
    name = remote or upstream_remote or "origin"
    remote_branch = merge_ref.removeprefix("refs/heads/") if merge_ref and name == upstream_remote else branch
    url = remote_url(store, name, values)
    if url is None:
        raise GitError(f"no git remote {name!r} in {store.worktree}; add one (`git remote add {name} URL`) "
                       "or name another with {opt:remote}", remote=name)
    return name, remote_branch, url

"""Making a store: `statedir init` and `statedir.init()`."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.errors import GitError, InvalidValue
from statedir.gitops import git, repository_init, worktrees
from statedir.hints import HINT, HINT2, Hint, opt, said
from statedir.store import branch as own_branch
from statedir.store import layout
from statedir.store.skeleton import CONFIG_DEFAULTS, populate, refuse_occupied, undo

__all__ = ["CONFIG_DEFAULTS", "init", "other_stores"]


def init(directory: str | Path, branch: str | None = None, new_store: bool = False,
         vet: Callable[[Path], None] | None = None) -> dict[str, Any]:
    """Make a store at `directory` (git init first where it is in no work tree); commits it.

    An existing store is left as it is; anything else already at `directory` is refused, and
    a failure part way removes what this call created. Where the repository already holds
    another store, the result carries a warning naming it (one repository, one store, is
    what discovery and the pre-commit hook expect). With `branch`, the store is a linked work
    tree on that branch of its own (statedir.store.branch). Where a remote branch holds a store
    (a clone of a repository whose store is on a branch of its own), a new one on the user's
    branch is refused unless `new_store`: `init --branch` checks that one out, first put to `vet`.
    """
    if not isinstance(directory, str | Path):
        raise InvalidValue(f"init(): directory must be a path, not {type(directory).__name__}", argument="directory")
    if branch is not None and not isinstance(branch, str):
        raise InvalidValue(f"init(): branch must be a branch name, not {type(branch).__name__}", argument="branch")
    directory = Path(directory).resolve()
    if branch is not None:
        return own_branch.init(directory, branch, vet)
    if (directory / layout.CONFIG).is_file():
        return {"store": str(directory), "created": False, "commit": None}
    refuse_occupied(directory)
    created = not directory.exists()
    worktree = git.find_worktree(directory)
    if worktree is not None and not new_store:
        _refuse_beside_a_pushed_store(worktree, directory)
    others = other_stores(worktree) if worktree is not None else []
    if worktree is None:
        try:
            repository_init.init(directory.parent)
        except BaseException:
            undo(directory, created)
            raise
    result = populate(directory, created)
    if worktree is None:
        result["git_init"] = str(directory.parent)  # a new repository: said, never done silently
    warnings = result.pop("warnings", [])
    warnings += [said(f"this repository already holds a store at {other}; this is a second one (commands run "
                      f"below {other.parent} still find {other} unless given {opt('store')})") for other in others]
    if warnings:
        result["warnings"] = warnings
    return result


def _refuse_beside_a_pushed_store(worktree: Path, directory: Path) -> None:
    pushed = worktrees.remote_stores(worktree, layout.CONFIG)
    if pushed:
        raise InvalidValue(f"this repository's store is on branch {pushed[0]} (a remote holds it): run "
                           f"`{HINT}` to check it out, instead of a second store "
                           f"at {directory} committed to the branch you work on (to make one anyway: "
                           f"{HINT2})", branches=pushed[:3],
                           hint=[Hint("init", {"branch": pushed[0]}), Hint("init", {"new_store": True})])


def other_stores(worktree: Path) -> list[Path]:
    """The stores the repository already holds: committed `statedir.yaml` files, and a store
    found by walking up (a store made but not yet committed by another tool)."""
    try:
        listed = git.run(worktree, "ls-files", "-z", "--", ":(glob)**/statedir.yaml").stdout.decode()
    except GitError:
        listed = ""  # a repository without a commit or index yet holds no store
    found = {(worktree / rel).parent for rel in listed.split("\0") if rel}
    return sorted(p for p in found if (p / layout.CONFIG).is_file())

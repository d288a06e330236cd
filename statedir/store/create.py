"""Making a store: `statedir init` and `statedir.init()`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.errors import GitError, InvalidValue
from statedir.gitops import git
from statedir.store import layout
from statedir.store.skeleton import CONFIG_DEFAULTS, populate, refuse_occupied, undo

__all__ = ["CONFIG_DEFAULTS", "init", "other_stores"]


def init(directory: str | Path, branch: str | None = None) -> dict[str, Any]:
    """Make a store at `directory` (git init first where it is in no work tree); commits it.

    An existing store is left as it is; anything else already at `directory` is refused, and
    a failure part way removes what this call created. Where the repository already holds
    another store, the result carries a warning naming it (one repository, one store, is
    what discovery and the pre-commit hook expect). With `branch`, the store is a linked work
    tree on that branch of its own (statedir.store.branch).
    """
    if not isinstance(directory, str | Path):
        raise InvalidValue(f"init(): directory must be a path, not {type(directory).__name__}", argument="directory")
    if branch is not None and not isinstance(branch, str):
        raise InvalidValue(f"init(): branch must be a branch name, not {type(branch).__name__}", argument="branch")
    directory = Path(directory).resolve()
    if branch is not None:
        from statedir.store import branch as own_branch

        return own_branch.init(directory, branch)
    if (directory / layout.CONFIG).is_file():
        return {"store": str(directory), "created": False, "commit": None}
    refuse_occupied(directory)
    created = not directory.exists()
    worktree = git.find_worktree(directory)
    others = other_stores(worktree) if worktree is not None else []
    if worktree is None:
        try:
            git.init(directory.parent)
        except BaseException:
            undo(directory, created)
            raise
    result = populate(directory, created)
    warnings = result.pop("warnings", [])
    warnings += [f"this repository already holds a store at {other}; this is a second one (commands run "
                 f"below {other.parent} still find {other} unless given --store)" for other in others]
    if warnings:
        result["warnings"] = warnings
    return result


def other_stores(worktree: Path) -> list[Path]:
    """The stores the repository already holds: committed `statedir.yaml` files, and a store
    found by walking up (a store made but not yet committed by another tool)."""
    try:
        listed = git.run(worktree, "ls-files", "-z", "--", ":(glob)**/statedir.yaml").stdout.decode()
    except GitError:
        listed = ""  # a repository without a commit or index yet holds no store
    found = {(worktree / rel).parent for rel in listed.split("\0") if rel}
    return sorted(p for p in found if (p / layout.CONFIG).is_file())

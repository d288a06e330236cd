"""Making a store: `statedir init` and `statedir.init()`."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from statedir.errors import GitError, InvalidValue, WriteFailed
from statedir.files import yaml
from statedir.gitops import git, store_commit
from statedir.store import layout
from statedir.store.disk import Store

CONFIG_DEFAULTS = {"format_version": 1, "default_template": "academic-pipeline", "lock_timeout": 30}


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
            _undo_init(directory, created)
            raise
    result = populate(directory, created)
    warnings = result.pop("warnings", [])
    warnings += [f"this repository already holds a store at {other}; this is a second one (commands run "
                 f"below {other.parent} still find {other} unless given --store)" for other in others]
    if warnings:
        result["warnings"] = warnings
    return result


def refuse_occupied(directory: Path) -> None:
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InvalidValue(f"{directory} exists and is neither empty nor a statedir store", path=str(directory))


def populate(directory: Path, created: bool) -> dict[str, Any]:
    """Write a new store's files into `directory` (in a git work tree) and commit them; on a
    failure what this call wrote goes again (`directory` itself too where `created`)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        files = {".gitignore": layout.GITIGNORE, ".gitattributes": layout.GITATTRIBUTES,
                 layout.CONFIG: yaml.dump(CONFIG_DEFAULTS, layout.schema_ref(layout.CONFIG))}
        for rel, text in files.items():
            (directory / rel).write_text(text)
        store = Store(directory)
        with store.locked():
            written = layout.copy_schemas(directory)
            paths = [store.git_path(r) for r in [*files, *written]]
            warnings = git.preflight(store.worktree)
            from statedir.gitops import merge_driver

            merge_driver.register(store.worktree)
            sha = store_commit.commit(store.worktree, paths, git.message("init statedir store", "-", "state_tracker",
                                                                      "init"), author="state_tracker")
    except OSError as exc:
        _undo_init(directory, created)
        raise WriteFailed(f"cannot make a store at {directory}: {exc.strerror or exc}") from None
    except BaseException:
        _undo_init(directory, created)
        raise
    result: dict[str, Any] = {"store": str(directory), "created": True, "commit": sha}
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


def _undo_init(directory: Path, created: bool) -> None:
    if directory.is_dir():
        if created:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            for child in directory.iterdir():
                if child.name == ".git":  # a linked work tree's pointer: its maker removes it
                    continue
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)

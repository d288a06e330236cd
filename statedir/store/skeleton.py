"""A new store's files, written into its directory and committed as one `init` commit (for
`statedir.store.create`, and `statedir.store.branch` on a branch of its own)."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from statedir.errors import InvalidValue, WriteFailed
from statedir.files import schema, yaml
from statedir.gitops import commit_message, git, merge_driver_config, store_commit
from statedir.store import layout
from statedir.store.store import Store

CONFIG_DEFAULTS = {"format_version": 1, "default_template": "academic-pipeline", "lock_timeout": 30}


def refuse_occupied(directory: Path) -> None:
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InvalidValue(f"{directory} exists and is neither empty nor a statedir store", path=str(directory))


def populate(directory: Path, created: bool, extra: dict[str, str] | None = None) -> dict[str, Any]:
    """Write a new store's files (and `extra`: path -> text) into `directory` (in a git work tree)
    and commit them; on a failure what this call wrote goes again (`directory` too where `created`)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        files = {".gitignore": layout.GITIGNORE, ".gitattributes": layout.GITATTRIBUTES,
                 layout.CONFIG: yaml.dump(CONFIG_DEFAULTS, layout.schema_ref(layout.CONFIG)), **(extra or {})}
        for rel, text in files.items():
            (directory / rel).write_text(text)
        store = Store(directory)
        with store.locked():
            written = copy_schemas(directory)
            paths = [store.git_path(r) for r in [*files, *written]]
            warnings = git.preflight(store.worktree)
            merge_driver_config.register(store.worktree)
            message = commit_message.message("init statedir store", "-", "state_tracker", "init")
            sha = store_commit.commit(store.worktree, paths, message, author="state_tracker")
    except OSError as exc:
        undo(directory, created)
        raise WriteFailed(f"cannot make a store at {directory}: {exc.strerror or exc}") from None
    except BaseException:
        undo(directory, created)
        raise
    result: dict[str, Any] = {"store": str(directory), "created": True, "commit": sha}
    if warnings:
        result["warnings"] = warnings
    return result


def undo(directory: Path, created: bool) -> None:
    if directory.is_dir():
        if created:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            for child in directory.iterdir():
                if child.name == ".git":  # a linked work tree's pointer: its maker removes it
                    continue
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)


def copy_schemas(root: Path) -> list[str]:
    """Refresh `.schemas/` from the package; returns the store-relative paths written."""
    target = root / ".schemas"
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name in schema.schema_names():
        src = schema.schema_path(name)
        dst = target / src.name
        if not dst.is_file() or dst.read_bytes() != src.read_bytes():
            shutil.copyfile(src, dst)
        written.append(f".schemas/{src.name}")
    return written

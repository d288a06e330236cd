"""Finding a store: the nearest one at or above a path, and why a path is no store."""
from __future__ import annotations

from pathlib import Path

from statedir.errors import NotAStore
from statedir.store.layout import CONFIG


def not_a_store(root: Path) -> str:
    """Why `root` is no store, and the likeliest fix: a store below it, or one above, or init."""
    below = sorted(p.parent for p in root.glob(f"*/{CONFIG}"))[:3] if root.is_dir() else []
    if below:
        return (f"{root} is not a statedir store (no {CONFIG}), but {', '.join(map(str, below))} is: "
                "pass that as --store (STATEDIR_STORE)")
    try:
        parent = root.resolve().parent  # a relative path walks up from where it resolves
        above = locate(parent) if parent != root.resolve() else None
    except NotAStore:
        above = None
    if above is not None:
        return f"{root} is not a statedir store (no {CONFIG}); the nearest store above it is {above}"
    return f"{root} is not a statedir store (no {CONFIG}); run `statedir init {root}` to make one"


def locate(start: Path) -> Path:
    """The nearest `state/statedir.yaml` at or above `start` (the default store)."""
    for directory in (start, *start.parents):
        if (directory / "state" / CONFIG).is_file():
            return directory / "state"
        if (directory / CONFIG).is_file():
            return directory
    raise NotAStore(f"no statedir store at or above {start}; run `statedir init` or pass --store")


def given_or_nearest(store: Path | None) -> Path:
    """--store / STATEDIR_STORE, else the nearest store at or above the current directory. A
    given path that is no store but holds `state/statedir.yaml` (a repository root) means that."""
    if store is None:
        return locate(Path.cwd())
    if not (store / CONFIG).is_file() and (store / "state" / CONFIG).is_file():
        return store / "state"
    return store

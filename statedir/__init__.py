"""statedir: pipeline state as a git-friendly directory of YAML files.

    import statedir
    statedir.init("state")           # make the store (git init first where needed); once
    sd = statedir.open("state")      # a StateDir: sd.new, sd.stage, sd.status, sd.validate, ...
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statedir.api import StateDir

__version__ = "0.1.0"
__all__ = ["__version__", "init", "open"]


def open(path: str | Path = "state", *, lock_timeout: float | None = None,  # noqa: A001 - mirrors builtins.open
         reset_boundaries: bool = False, actor: str | None = None) -> StateDir:
    """Open the store at `path` for in-process transitions (see statedir.api.StateDir);
    `actor` defaults to STATEDIR_ACTOR."""
    from statedir.api import StateDir

    return StateDir(path, lock_timeout=lock_timeout, reset_boundaries=reset_boundaries, actor=actor)


def init(directory: str | Path = "state") -> dict[str, Any]:
    """Make a store at `directory` and commit it: {store, created, commit[, warnings]}; an
    existing store is left as it is."""
    from statedir.newstore import init as make

    return make(directory)

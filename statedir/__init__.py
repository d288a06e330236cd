"""statedir: pipeline state as a git-friendly directory of YAML files."""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def open(path: Any = "state", **kwargs: Any) -> Any:  # noqa: A001 - mirrors builtins.open's role
    """Open the store at `path` for in-process transitions (see statedir.api.StateDir)."""
    from statedir.api import StateDir

    return StateDir(path, **kwargs)

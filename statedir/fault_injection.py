"""Fault-injection points on the write path, off unless a test arms one.

The CLI arms a point from STATEDIR_FAULT (e.g. `between_files`, `between_files:enospc`,
`during_commit:git`): plain names SIGKILL the process there, `:enospc` raises a disk-full
error and `:git` a git failure, so tests can stop a transition at every step.
"""
from __future__ import annotations

import errno
import os

from statedir.errors import GitError

try:  # the signal number from the builtin module: `signal` builds enums at import (about 0.5 ms)
    from _signal import SIGKILL
except ImportError:  # pragma: no cover - other Pythons
    from signal import SIGKILL

POINTS = ("before_write", "between_files", "after_write", "during_commit", "after_commit")
_armed: dict[str, str] = {}


def arm(spec: str | None) -> None:
    """Arm one point or several, comma-separated (`between_files:enospc,during_recovery:enospc`)."""
    _armed.clear()
    for item in (spec or "").split(","):
        if item:
            name, _, kind = item.partition(":")
            _armed[name] = kind


def point(name: str) -> None:
    if name not in _armed:
        return
    kind = _armed[name]
    if kind == "enospc":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    if kind == "git":
        raise GitError(f"injected git failure at {name}")
    os.kill(os.getpid(), SIGKILL)

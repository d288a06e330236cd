"""Fault-injection points on the write path, off unless a test arms one.

The CLI arms a point from STATEDIR_FAULT (e.g. `between_files`, `between_files:enospc`,
`during_commit:git`): plain names SIGKILL the process there, `:enospc` raises a disk-full
error and `:git` a git failure, so tests can stop a transition at every step.
"""
from __future__ import annotations

import errno
import os
import signal

POINTS = ("before_write", "between_files", "after_write", "during_commit", "after_commit")
_armed: str | None = None


def arm(spec: str | None) -> None:
    global _armed
    _armed = spec or None


def point(name: str) -> None:
    if _armed is None or _armed.split(":")[0] != name:
        return
    kind = _armed.partition(":")[2]
    if kind == "enospc":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    if kind == "git":
        from statedir.errors import GitError

        raise GitError(f"injected git failure at {name}")
    os.kill(os.getpid(), signal.SIGKILL)

"""The store lock, fair to writers: `.statedir.lock` is flock()ed shared by readers and
exclusively by a writer, and every taker first passes a gate, a flock on the store's folder.

flock() itself prefers no one: a writer asking for the lock gets it only at a moment when no
reader holds it, and readers in tight loops (agents polling `status`) overlap so that such a
moment may not come before the writer's timeout. At the gate a writer waits exclusively and
keeps it while it waits for the lock, so readers that come after it wait for it; readers pass
the gate shared and leave it as soon as they hold the lock, so they never hold one another up.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path

from statedir.errors import LockTimeout, WriteFailed

# Told once when a taker has waited NOTICE_AFTER seconds (the command line says so at a terminal:
# a lock held for up to its timeout must not look like a hang); called with the time limit.
ON_WAIT: ContextVar[Callable[[float], None] | None] = ContextVar("statedir_on_lock_wait", default=None)
NOTICE_AFTER = 0.5


def take(fd: int, mode: int, deadline: float, limit: float) -> None:
    """flock `fd` in `mode` (LOCK_SH or LOCK_EX), polling until the deadline; LOCK_TIMEOUT after."""
    delay = 0.002
    notice = ON_WAIT.get()
    notice_at = time.monotonic() + NOTICE_AFTER if notice is not None else None
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise WriteFailed(f"cannot lock the store: {exc.strerror}") from None
        if time.monotonic() >= deadline:
            raise LockTimeout(f"store is locked by another writer; gave up after {limit:g} s", timeout=limit)
        if notice_at is not None and time.monotonic() >= notice_at and notice is not None:
            ON_WAIT.set(None)  # one line per command, however many locks it then waits for
            notice_at = None
            notice(limit)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


@contextlib.contextmanager
def gate(root: Path, mode: int, deadline: float, limit: float) -> Iterator[None]:
    """Pass the gate in `mode` (exclusive: a writer) for as long as the block takes the lock. A
    folder that cannot be opened has no gate: the lock alone still excludes, only less fairly."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        take(fd, mode, deadline, limit)
        yield
    finally:
        os.close(fd)  # closing releases it


def acquire(root: Path, fd: int, mode: int, limit: float) -> None:
    """Take the store lock on `fd` in `mode` through the gate, within `limit` seconds in all."""
    deadline = time.monotonic() + limit
    with gate(root, mode, deadline, limit):
        take(fd, mode, deadline, limit)

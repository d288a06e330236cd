"""The store lock, fair to writers: `.statedir.lock` is flock()ed shared by readers and
exclusively by a writer, and every taker first passes a gate, a flock on the store's folder.

flock() itself prefers no one: a writer asking for the lock gets it only at a moment when no
reader holds it, and readers in tight loops (agents polling `status`) overlap so that such a
moment may not come before the writer's timeout. At the gate a writer waits exclusively and
keeps it while it waits for the lock, so readers that come after it wait for it; readers pass
the gate shared and leave it as soon as they hold the lock, so they never hold one another up.

Writers are served in the order they came (`in_line`): polling flock() is a race that a writer
who has waited long loses as often as one who just came, so with 16 writers the slowest waited
11-14 s while the median waited under one. Each writer first takes a ticket, a file in a queue
folder under `.git/statedir/` named by its arrival time, flocked by its holder for as long as it
waits and writes, and goes on to the gate only once no ticket before its own is held (its
writer done, or dead: a dead writer's flock is gone with it, and its file is removed by the
next in line).
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
    notice_at = time.monotonic() + NOTICE_AFTER
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise WriteFailed(f"cannot lock the store: {exc.strerror}") from None
        if time.monotonic() >= deadline:
            raise LockTimeout(f"store is locked by another writer; gave up after {limit:g} s", timeout=limit)
        notice_at = _told(notice_at, limit)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _told(notice_at: float | None, limit: float) -> float | None:
    """Tell the waiter once it has waited past `notice_at` (ON_WAIT); None once told."""
    if notice_at is None or time.monotonic() < notice_at:
        return notice_at
    notice = ON_WAIT.get()
    if notice is not None:
        ON_WAIT.set(None)  # one line per command, however many locks (and the line) it then waits for
        notice(limit)
    return None


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


def acquire(root: Path, fd: int, mode: int, limit: float, deadline: float | None = None) -> None:
    """Take the store lock on `fd` in `mode` through the gate, within `limit` seconds in all
    (by `deadline`, where the wait began earlier: in line)."""
    deadline = time.monotonic() + limit if deadline is None else deadline
    with gate(root, mode, deadline, limit):
        take(fd, mode, deadline, limit)


@contextlib.contextmanager
def in_line(queue: Path, limit: float, deadline: float) -> Iterator[None]:
    """Wait, within `limit` seconds, until every writer that came before has had its turn, and
    keep this writer's place until the block ends (see the module). A queue folder that cannot
    be made or written (a read-only git directory) has no line: the gate alone still serves."""
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        queue.mkdir(parents=True, exist_ok=True)
        staged = queue / f"new-{name}"
        fd = os.open(staged, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held before the ticket can be seen: never taken for a dead one's
        os.rename(staged, queue / name)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            staged.unlink()
        yield
        return
    try:
        delay, notice_at = 0.001, time.monotonic() + NOTICE_AFTER
        while _ahead(queue, name):
            if time.monotonic() >= deadline:
                raise LockTimeout(f"store is locked by another writer; gave up after {limit:g} s", timeout=limit)
            notice_at = _told(notice_at, limit)
            time.sleep(delay)
            delay = min(delay * 2, 0.01)
        yield
    finally:
        with contextlib.suppress(OSError):
            (queue / name).unlink()
        os.close(fd)


def _ahead(queue: Path, name: str) -> bool:
    """Whether a ticket before `name` is still held; one whose writer is gone is removed."""
    try:
        names = os.listdir(queue)
    except OSError:
        return False
    for other in sorted(n for n in names if n < name and not n.startswith("new-")):
        try:
            other_fd = os.open(queue / other, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # gone meanwhile: its writer is done
        try:
            fcntl.flock(other_fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True  # its writer waits or writes
        finally:
            os.close(other_fd)
        with contextlib.suppress(OSError):  # free: a writer that died before removing it
            (queue / other).unlink()
    return False

"""Who ran the git commands that may be holding this repository's locks: a statedir process
that runs git's own porcelain (a sync's `git merge`, `read-tree -m -u`) records its pid and
start time in `.git/statedir/git.owner` for as long as it does (`running`).

git's `index.lock` holds nothing that names its maker. A sync killed with its git leaves the
lock behind, and the merge driver's temporary `.merge_file_*` files in the work tree; every later
commit then fails on the lock. With this record, a lock made while that statedir ran, once its
statedir is gone and no git runs in the repository, is known to be a dead statedir's git's
(`left_by_the_dead`), and is released by the next command or `doctor --fix`.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

NAME = "git.owner"
LEFTOVER_PREFIX = ".merge_file_"  # git's temporary files for a merge driver (%O %A %B), in the work tree's top


def _start_time(pid: int) -> str:
    """When a process started (clock ticks since boot, from /proc), or "" where that cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return ""
    fields = raw[raw.rfind(b")") + 2:].split()
    return fields[19].decode() if len(fields) > 19 else ""


def alive(pid: int, start: str = "") -> bool:
    """Whether process `pid` runs (and, with `start`, is the process that started then)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not start or _start_time(pid) in ("", start)  # a pid used again by another process: dead


@contextlib.contextmanager
def running(gitdir: Path, worktree: Path) -> Iterator[None]:
    """Record this process as the one running git in the repository until the block ends."""
    path = gitdir / "statedir" / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{NAME}.{os.getpid()}.tmp")
    tmp.write_text(f"{os.getpid()} {_start_time(os.getpid()) or '-'} {worktree.resolve()}\n")
    os.replace(tmp, path)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def dead(gitdir: Path) -> tuple[int, Path] | None:
    """(when it began running git, in ns: the record's mtime; its work tree) of the recorded
    statedir, if it is gone; None if it runs, or no record is there."""
    path = gitdir / "statedir" / NAME
    try:
        pid, start, worktree = path.read_text().rstrip("\n").split(" ", 2)
        since = os.stat(path).st_mtime_ns
        running = alive(int(pid), "" if start == "-" else start)
    except (OSError, ValueError):
        return None
    return None if running else (since, Path(worktree))


def forget(gitdir: Path) -> None:
    (gitdir / "statedir" / NAME).unlink(missing_ok=True)


def leftovers(worktree: Path, since: int) -> list[Path]:
    """The merge driver's temporary files a git killed since `since` left in the work tree's top."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(worktree):
            if entry.name.startswith(LEFTOVER_PREFIX) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_ctime_ns >= since:
                        found.append(Path(entry.path))
    return found

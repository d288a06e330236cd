"""The user's git processes that may write back an index they read before statedir changed it.

git's porcelain reads the index *before* it takes `index.lock`: `git commit` reads it, then
takes the lock and writes what it read (refreshed) back. A commit of the user's that read the
index just before statedir brought it to a transition, and takes the lock just after statedir
let it go, puts the store's entries back as they were (its own commit then fails, HEAD having
moved), and the user's next commit takes them: a commit that undoes the transition. So statedir,
holding the lock, does not let it go while such a git, running since before the index changed,
is still running: one that tries to take the lock meanwhile fails on it (as beside any other git)
and writes nothing back.

Which processes these are is read from /proc (Linux; elsewhere none is waited for): git
processes working in this repository whose command writes the index, statedir's own children
aside. One running a child of its own (an editor, a hook, a fetch) is past its index: none of
those commands starts one before it has written the index. The wait is bounded (`WAIT_SECONDS`).
"""
from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from statedir.gitops.git import common_dir

PROC = Path("/proc")
WAIT_SECONDS = 10.0  # a CPU-starved git may take seconds from its read to the lock; the wait ends when it does
# git commands that write the index from a read they may have made before taking its lock
WRITERS = frozenset({"add", "am", "apply", "checkout", "cherry-pick", "commit", "merge", "mv", "pull", "read-tree",
                     "rebase", "reset", "restore", "revert", "rm", "stash", "switch", "update-index"})
_VALUED = frozenset({b"-C", b"-c", b"--git-dir", b"--work-tree", b"--namespace", b"--exec-path"})


def roots(gitdir: Path) -> set[Path]:
    """Where a git working in this repository has its current directory: the work tree and git directory."""
    found = {gitdir.resolve(), common_dir(gitdir).resolve()}
    with contextlib.suppress(OSError):  # a linked work tree names its own .git file here
        found.add(Path((gitdir / "gitdir").read_text().strip()).resolve().parent)
    found.update(root.parent for root in list(found) if root.name == ".git")
    return found


def _stat(pid: str) -> tuple[bytes, bytes, bytes] | None:
    """(command name, state, start time) of a process, or None if it is gone."""
    try:
        with open(PROC / pid / "stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    close = raw.rfind(b")")
    fields = raw[close + 2:].split()
    return (raw[raw.find(b"(") + 1:close], fields[0], fields[19]) if len(fields) > 19 else None


def _subcommand(pid: str) -> str:
    """The git command a git process runs (`commit` for `git -C x commit -q`)."""
    try:
        args = (PROC / pid / "cmdline").read_bytes().split(b"\0")[1:]
    except OSError:
        return ""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _VALUED:
            skip = True
        elif not arg.startswith(b"-"):
            return arg.decode(errors="replace")
    return ""


def _has_child(pid: str) -> bool:
    try:
        return bool((PROC / pid / "task" / pid / "children").read_bytes().strip())
    except OSError:
        return False


class Watch:
    """`Watch(gitdir)` before the lock; `wait()`, under it and after the index changed, waits for
    the git writers running in this repository then.

    Every process is read afresh when `wait()` runs: one forked before the lock may still have
    been the parent's program when the lock was taken and be a git reading the index by now.
    """

    def __init__(self, gitdir: Path) -> None:
        self.gitdir = gitdir
        self.usable = (PROC / "self" / "stat").exists()

    def wait(self) -> None:
        """Wait (bounded) until no git that may hold an index read before now is still running."""
        if not self.usable:
            return
        me, places = str(os.getpid()), roots(self.gitdir)
        pending: dict[str, bytes] = {}
        with contextlib.suppress(OSError):
            for pid in os.listdir(PROC):
                info = _stat(pid) if pid.isdigit() and pid != me else None
                if info and info[0].startswith(b"git") and self._writer_here(pid, me, places):
                    pending[pid] = info[2]
        deadline = time.monotonic() + WAIT_SECONDS
        delay = 0.001
        while pending and time.monotonic() < deadline:
            for pid, start in list(pending.items()):
                now = _stat(pid)
                if now is None or now[2] != start or now[1] == b"Z" or _has_child(pid):
                    del pending[pid]  # gone (or a zombie), or past its index
            if pending:
                time.sleep(delay)
                delay = min(delay * 2, 0.01)

    @staticmethod
    def _writer_here(pid: str, me: str, places: set[Path]) -> bool:
        try:
            with open(PROC / pid / "stat", "rb") as f:
                parent = f.read().rsplit(b")", 1)[1].split()[1].decode()
            cwd = Path(os.readlink(PROC / pid / "cwd"))
        except (OSError, IndexError):
            return False
        if parent == me or _subcommand(pid) not in WRITERS or _has_child(pid):
            return False
        return any(cwd == root or root in cwd.parents for root in places)

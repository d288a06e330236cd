"""The user's index while statedir commits: held under git's own `index.lock` from before the
commit until the index agrees with it, so a user's `git commit` never sees an index that
predates statedir's commit (it fails on the lock, as it would beside any other git).

git writes the next index into a private file (`GIT_INDEX_FILE`, a hard link of the index to
start from) which replaces the index once the commit has landed. A lock left by a statedir
process that died is recognised by the owner file beside it (pid, inode, ctime) and released.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from statedir.errors import GitError

OWNER = "index.lock.owner"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def release_dead_index_lock(gitdir: Path) -> bool:
    """Remove `index.lock` where a statedir process that is gone left it; True if it did."""
    owner = gitdir / "statedir" / OWNER
    try:
        pid, inode, ctime = (int(v) for v in owner.read_text().split())
    except (OSError, ValueError):
        return False
    lock = gitdir / "index.lock"
    try:
        st = os.lstat(lock)
    except FileNotFoundError:
        st = None
    if st is not None and (st.st_ino, st.st_ctime_ns) == (inode, ctime):
        if _alive(pid):
            return False
        lock.unlink()
    owner.unlink(missing_ok=True)  # the lock it named is gone (or is someone else's now)
    (gitdir / "statedir" / "index.next").unlink(missing_ok=True)
    return st is not None


@contextlib.contextmanager
def held(gitdir: Path, wait: float) -> Iterator[dict[str, str]]:
    """Hold the user's index; yields the environment under which git writes the next index.
    On success the next index replaces the user's; on failure the user's is left as it was."""
    lock = gitdir / "index.lock"
    deadline = time.monotonic() + wait
    delay = 0.005
    while True:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileExistsError:
            if release_dead_index_lock(gitdir):
                continue
            if time.monotonic() >= deadline:
                raise GitError(f"the repository's index is locked ({lock}): another git command is running. "
                               f"If none is, remove the lock: `rm -f '{lock}'`", lock=str(lock)) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        except OSError as exc:
            raise GitError(f"cannot lock the repository's index ({lock}): {exc.strerror}") from None
    private = gitdir / "statedir"
    owner = private / OWNER
    nxt = private / "index.next"
    ok = False
    try:
        st = os.fstat(fd)
        os.close(fd)
        private.mkdir(parents=True, exist_ok=True)
        owner.write_text(f"{os.getpid()} {st.st_ino} {st.st_ctime_ns}\n")
        nxt.unlink(missing_ok=True)
        (private / "index.next.lock").unlink(missing_ok=True)
        index = gitdir / "index"
        if index.exists():
            try:
                os.link(index, nxt)  # git writes the next index anew, so the link costs no copy
            except OSError:
                shutil.copyfile(index, nxt)
        yield {"GIT_INDEX_FILE": str(nxt)}
        ok = True
    finally:
        try:
            if ok and nxt.exists():
                os.replace(nxt, gitdir / "index")
            else:
                nxt.unlink(missing_ok=True)
        finally:
            lock.unlink(missing_ok=True)
            owner.unlink(missing_ok=True)

"""The user's index while statedir commits: held under git's own `index.lock` from before the
commit until the index agrees with it, so a user's `git commit` never sees an index that
predates statedir's commit (it fails on the lock, as it would beside any other git).

git writes the next index into a private file (`GIT_INDEX_FILE`, a hard link of the index to
start from) which replaces the index once the commit has landed. A lock left by a statedir
process that died is recognised by the owner file beside it (pid, inode, ctime) and released,
with the locks a git it ran left when killed with it.
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
STALE_GIT_LOCK_NS = 2 * 10**9  # git holds a ref lock for milliseconds; one this old was left by a dead git


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
        leftovers = _git_locks_since(gitdir, ctime)
        if leftovers and (any(time.time_ns() - mtime < STALE_GIT_LOCK_NS for _, mtime in leftovers)
                          or _git_running_in(gitdir)):
            return False  # a git (one it started, or the user's) may still hold one: wait for it
        for path, _ in leftovers:  # git's own, left by a git killed with the writer
            path.unlink(missing_ok=True)
        lock.unlink()
    owner.unlink(missing_ok=True)  # the lock it named is gone (or is someone else's now)
    (gitdir / "statedir" / "index.next").unlink(missing_ok=True)
    (gitdir / "statedir" / f"index.next.{pid}.tmp").unlink(missing_ok=True)  # statedir.indexfile's, mid-write
    return st is not None


def _git_running_in(gitdir: Path) -> bool:
    """Whether a git process is running in this repository (its work tree or git directory),
    as far as /proc tells (Linux; elsewhere only the locks' age counts). A lock of git's is
    removed only when none is: a git the dead writer started, or the user's own (a slow hook,
    a stopped process), may hold it for longer than its age suggests."""
    proc = Path("/proc")
    if not (proc / "self" / "cwd").exists():
        return False
    roots = {gitdir.resolve()}
    with contextlib.suppress(OSError):
        roots.add((gitdir / (gitdir / "commondir").read_text().strip()).resolve())
    with contextlib.suppress(OSError):  # a linked work tree names its own .git file here
        roots.add(Path((gitdir / "gitdir").read_text().strip()).resolve().parent)
    roots.update(root.parent for root in list(roots) if root.name == ".git")
    me = str(os.getpid())
    for entry in os.scandir(proc):
        if not entry.name.isdigit() or entry.name == me:
            continue
        try:
            if not (proc / entry.name / "comm").read_text().startswith("git"):
                continue
            cwd = Path(os.readlink(proc / entry.name / "cwd"))
        except OSError:  # gone meanwhile, or another user's
            continue
        if any(cwd == root or root in cwd.parents for root in roots):
            return True
    return False


def _git_locks_since(gitdir: Path, ctime: int) -> list[tuple[Path, int]]:
    """git's lock files made since `ctime` (while a statedir writer held the index) by the
    commit it ran: HEAD's and the branch's, the next index's and `commit --only`'s temporary
    index. A git killed holding one (SIGKILL cannot be caught) leaves it, and every later
    commit fails on it; each is (path, mtime)."""
    common = gitdir
    with contextlib.suppress(OSError):
        common = gitdir / (gitdir / "commondir").read_text().strip()
    candidates = [gitdir / "HEAD.lock", gitdir / "statedir" / "index.next.lock", *gitdir.glob("next-index-*.lock")]
    with contextlib.suppress(OSError):
        head = (gitdir / "HEAD").read_text().strip()
        if head.startswith("ref: refs/"):
            candidates.append(common / f"{head[5:]}.lock")
    found = []
    for path in candidates:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if st.st_ctime_ns >= ctime:
            found.append((path, st.st_mtime_ns))
    return found


class Index:
    """The user's index, held: git writes the next one into `env`'s file, and `publish()`
    puts it in place. The index is published *before* HEAD moves: `git commit` reads HEAD
    before it reads the index, so a user's commit then sees either the old HEAD (and fails its
    compare-and-swap) or the new HEAD with the new index, never the new HEAD with the old index."""

    def __init__(self, gitdir: Path) -> None:
        self.index = gitdir / "index"
        self.next = gitdir / "statedir" / "index.next"
        self.env = {"GIT_INDEX_FILE": str(self.next)}

    def start(self) -> None:
        self.next.unlink(missing_ok=True)
        if self.index.exists():
            try:
                os.link(self.index, self.next)  # git writes the next index anew, so the link costs no copy
            except OSError:
                shutil.copyfile(self.index, self.next)

    def publish(self) -> None:
        """Put the next index in place; git may go on writing a newer one (start again)."""
        if self.next.exists():
            os.replace(self.next, self.index)
        self.start()


@contextlib.contextmanager
def held(gitdir: Path, wait: float) -> Iterator[Index]:
    """Hold the user's index (git's own `index.lock`) until the block ends; a failure leaves
    the index as it was last published."""
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
    owner = gitdir / "statedir" / OWNER
    index = Index(gitdir)
    try:
        st = os.fstat(fd)
        os.close(fd)
        owner.parent.mkdir(parents=True, exist_ok=True)
        owner.write_text(f"{os.getpid()} {st.st_ino} {st.st_ctime_ns}\n")
        (gitdir / "statedir" / "index.next.lock").unlink(missing_ok=True)
        index.start()
        yield index
    finally:
        try:
            index.next.unlink(missing_ok=True)
        finally:
            lock.unlink(missing_ok=True)
            owner.unlink(missing_ok=True)

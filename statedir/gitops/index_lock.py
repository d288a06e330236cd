"""The user's index while statedir commits: git's own `index.lock` is held while the index
is brought to statedir's commit and HEAD is moved to it, so a user's `git commit` never sees
an index that predates statedir's commit (it fails on the lock, as it would beside any other git).

The lock is held for as short a time as can be, since a writer killed while it holds the lock
leaves it behind, and the user's own git then fails on it until a statedir command releases it.
The next index is written beforehand into a private file (`Index`: a hard link of the index to
start from, `GIT_INDEX_FILE` for git), and under the lock only renamed over the user's, after a
check that the user's index is still the file it was built from. statedir's lock names its
writer from the moment it exists (it is made by linking a file holding the mark and the pid),
so a lock left by a statedir process that died, killed at any point, is recognised and
released, with the locks a git it ran left when killed with it.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from statedir.errors import GitError
from statedir.gitops import git_owner, index_readers
from statedir.gitops.git import common_dir, git_dir

OWNER = "index.lock.owner"  # where a statedir before the mark recorded its lock
MARK = b"statedir writer "  # an index.lock of statedir's begins with this, then its pid
STALE_GIT_LOCK_NS = 2 * 10**9  # git holds a ref lock for milliseconds; one this old was left by a dead git


def _holder(gitdir: Path, st: os.stat_result) -> int | None:
    """The pid of the statedir writer that made this `index.lock`: written into the lock as it
    was made (it appears whole, by link), or, from a statedir before that, in the owner file."""
    try:
        with open(gitdir / "index.lock", "rb") as lock:
            head = lock.read(64)
        if head.startswith(MARK):
            return int(head[len(MARK):].split()[0])
        pid, inode, ctime = (int(v) for v in (gitdir / "statedir" / OWNER).read_text().split())
    except (OSError, ValueError, IndexError):
        return None
    return pid if (st.st_ino, st.st_ctime_ns) == (inode, ctime) else None


def release_dead_index_lock(gitdir: Path) -> bool:
    """Remove `index.lock` where a statedir process that is gone left it; True if it did."""
    lock = gitdir / "index.lock"
    try:
        st = os.lstat(lock)
    except FileNotFoundError:
        return False
    pid = _holder(gitdir, st)
    if pid is None:
        return _release_dead_gits(gitdir, lock, st)
    if git_owner.alive(pid):
        return False
    leftovers = _git_locks_since(gitdir, st.st_ctime_ns)
    if leftovers and (any(time.time_ns() - mtime < STALE_GIT_LOCK_NS for _, mtime in leftovers)
                      or _git_running_in(gitdir)):
        return False  # a git (one it started, or the user's) may still hold one: wait for it
    for path, _ in leftovers:  # git's own, left by a git killed with the writer
        path.unlink(missing_ok=True)
    if os.lstat(lock).st_ino == st.st_ino:
        lock.unlink()
    for name in (OWNER, "index.next", f"index.next.{pid}.tmp", f"index.lock.{pid}", *_next_files(pid)):
        (gitdir / "statedir" / name).unlink(missing_ok=True)  # its other leftovers
    return True


def left_by_the_dead(gitdir: Path) -> bool:
    """Whether `index.lock` is there and a statedir that is gone (or a git it ran) made it."""
    try:
        st = os.lstat(gitdir / "index.lock")
    except FileNotFoundError:
        return False
    pid = _holder(gitdir, st)
    if pid is not None:
        return not git_owner.alive(pid)
    owner = git_owner.dead(gitdir)
    return owner is not None and st.st_ctime_ns >= owner[0]


def wait_to_release(gitdir: Path, wait: float) -> bool:
    """release_dead_index_lock, tried for up to `wait` seconds while the lock is too young to be
    taken for a dead git's (past that age, what holds it back is a git running: not waited for)."""
    deadline = time.monotonic() + wait
    while not release_dead_index_lock(gitdir):
        try:
            age = time.time_ns() - os.lstat(gitdir / "index.lock").st_mtime_ns
        except FileNotFoundError:
            return True
        if time.monotonic() >= deadline or age > STALE_GIT_LOCK_NS + 10**9 or not left_by_the_dead(gitdir):
            return False
        time.sleep(0.1)
    return True


def _release_dead_gits(gitdir: Path, lock: Path, st: os.stat_result) -> bool:
    """git's own `index.lock`, made while a statedir that is gone ran git (statedir.gitops.git_owner):
    released, with the ref locks and merge files made since, once none is younger than a dead
    git's would be and no git runs in the repository."""
    owner = git_owner.dead(gitdir)
    if owner is None or st.st_ctime_ns < owner[0]:
        return False
    locks = [(lock, st.st_mtime_ns), *_git_locks_since(gitdir, owner[0])]
    if any(time.time_ns() - mtime < STALE_GIT_LOCK_NS for _, mtime in locks) or _git_running_in(gitdir):
        return False
    for path, _ in locks:
        path.unlink(missing_ok=True)
    for path in git_owner.leftovers(owner[1], owner[0]):
        path.unlink(missing_ok=True)
    git_owner.forget(gitdir)
    return True


def _next_files(pid: int) -> tuple[str, ...]:
    """The files a writer with this pid builds its next index in (and git's lock of it)."""
    return f"index.next.{pid}", f"index.next.{pid}.lock", f"index.next.{pid}.{pid}.tmp"


def _sweep(folder: Path) -> None:
    """Remove the next-index files of writers that are gone (killed before they took the lock)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        pid = name.split(".")[2] if name.startswith("index.next.") and name.count(".") >= 2 else ""
        if pid.isdigit() and int(pid) != os.getpid() and not git_owner.alive(int(pid)):
            (folder / name).unlink(missing_ok=True)


def _git_running_in(gitdir: Path) -> bool:
    """Whether a git process is running in this repository (its work tree or git directory),
    as far as /proc tells (Linux; elsewhere only the locks' age counts). A lock of git's is
    removed only when none is: a git the dead writer started, or the user's own (a slow hook,
    a stopped process), may hold it for longer than its age suggests."""
    proc = Path("/proc")
    if not (proc / "self" / "cwd").exists():
        return False
    roots = index_readers.roots(gitdir)
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
    common = common_dir(gitdir)
    candidates = [gitdir / "HEAD.lock", gitdir / "statedir" / "index.next.lock", *gitdir.glob("next-index-*.lock"),
                  *(gitdir / "statedir").glob("index.next.*.lock")]
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


def _identity(path: Path) -> list[int] | None:
    """Which file the index is (inode, mtime, size; None: none): git replaces it on every write."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_mtime_ns, st.st_size]


class Index:
    """The next index: begun as a hard link of the user's (`start`, before the lock), brought
    to the commit in this private file (`env` gives it to git), and put in place by `publish`
    under the lock, *before* HEAD moves: `git commit` reads HEAD before it reads the index, so a
    user's commit then sees either the old HEAD (and fails its compare-and-swap) or the new HEAD
    with the new index, never the new HEAD with the old index."""

    def __init__(self, gitdir: Path) -> None:
        self.index = gitdir / "index"
        self.next = gitdir / "statedir" / f"index.next.{os.getpid()}"
        self.env = {"GIT_INDEX_FILE": str(self.next)}
        self.base: list[int] | None = None  # the user's index the next one starts from

    def start(self) -> None:
        """Begin the next index from the user's index as it is now."""
        self.next.parent.mkdir(parents=True, exist_ok=True)
        _sweep(self.next.parent)
        for name in _next_files(os.getpid()):
            (self.next.parent / name).unlink(missing_ok=True)
        self.base = _identity(self.index)  # before the link: a newer index then fails `current`
        if self.base is not None:
            try:
                os.link(self.index, self.next)  # git writes the next index anew, so the link costs no copy
            except FileNotFoundError:
                self.base = None
            except OSError:  # a file system without hard links (rare): a copy of its bytes (shutil.copyfile's
                self.next.write_bytes(self.index.read_bytes())  # work, without loading shutil, bz2 and lzma)

    def current(self) -> bool:
        """Whether the user's index is still the file the next one was begun from."""
        return _identity(self.index) == self.base

    def publish(self) -> None:
        """Put the next index in place (under the lock)."""
        if self.next.exists():
            os.replace(self.next, self.index)
        self.base = _identity(self.index)

    def discard(self) -> None:
        for name in _next_files(os.getpid()):
            (self.next.parent / name).unlink(missing_ok=True)


def _take(lock: Path, mine: Path) -> bool:
    """Make `lock` as git would (exclusively), holding this process's mark from the start:
    linked from `mine`, so a writer killed at any moment leaves a lock that names it."""
    try:
        os.link(mine, lock)
        return True
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: made, then marked at once
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as out:
            out.write(mine.read_bytes())
        return True


@contextlib.contextmanager
def held(gitdir: Path, wait: float) -> Iterator[None]:
    """Hold the user's index (git's own `index.lock`) until the block ends."""
    lock = gitdir / "index.lock"
    mine = gitdir / "statedir" / f"index.lock.{os.getpid()}"
    deadline = time.monotonic() + wait
    delay = 0.005
    readers = index_readers.Watch(gitdir)
    try:
        mine.parent.mkdir(parents=True, exist_ok=True)
        mine.write_bytes(MARK + f"{os.getpid()}\n".encode())
        while not _take(lock, mine):
            if release_dead_index_lock(gitdir):
                continue
            if time.monotonic() >= deadline:
                raise GitError(f"the repository's index is locked ({lock}): another git command is running. "
                               f"If none is, remove the lock: `rm -f '{lock}'`", lock=str(lock))
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
    except OSError as exc:
        raise GitError(f"cannot lock the repository's index ({lock}): {exc.strerror}") from None
    finally:
        mine.unlink(missing_ok=True)
    try:
        yield
    finally:
        try:
            readers.wait()  # a git that read the index before it changed would write it back
        finally:
            lock.unlink(missing_ok=True)


def settle(worktree: Path, timeout: float = 10.0) -> None:
    """Wait for git processes a killed writer left running (SIGKILL does not reach its
    children): its commit may still land, and rolling back must see where HEAD ends up."""
    gitdir = git_dir(worktree)
    locks = [gitdir / "index.lock", gitdir / "HEAD.lock", gitdir / "statedir" / "index.next.lock"]
    time.sleep(0.05)  # a git the writer had just started may not hold its lock yet
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        release_dead_index_lock(gitdir)
        if not any(lock.exists() for lock in locks):
            break
        time.sleep(0.01)

"""The store on disk: safe paths, the exclusive lock, atomic writes and appends (where each
file lives is `statedir.store.layout`)."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statedir.errors import (
    BadFile,
    CorruptStore,
    InvalidValue,
    NotAStore,
    StatedirError,
    UnknownRun,
    WriteFailed,
)
from statedir.files import schema
from statedir.files.parse_cache import ParseCache, digest
from statedir.gitops import git, maintenance
from statedir.store import expectation, journal, locking, sync_journal
from statedir.store.discovery import not_a_store
from statedir.store.journal import JOURNAL
from statedir.store.layout import CONFIG, LOCK, check_run_id, schema_ref

if TYPE_CHECKING:
    from statedir.gitops.libgit import Objects

DEFAULT_LOCK_TIMEOUT = 30.0


def check_timeout(value: object, name: str = "lock timeout") -> float:
    """A lock timeout in seconds: a finite number from 0 to a day (nan would wait forever)."""
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidValue(f"{name} {value!r} is not a number of seconds", value=str(value)) from None
    if not 0 <= seconds <= 86400:  # false for nan and the infinities too (no math import)
        raise InvalidValue(f"{name} {value!r} must be a number of seconds from 0 to 86400", value=str(value))
    return seconds


class Store:
    """An opened store: its directory, its git work tree and its configuration."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        config_path = self.root / CONFIG
        if not config_path.is_file():
            raise NotAStore(not_a_store(root), store=str(root))
        worktree = git.find_worktree(self.root)
        if worktree is None:
            raise NotAStore(f"store {root} is not inside a git work tree", store=str(root))
        self.worktree = worktree
        self.prefix = self.root.relative_to(worktree).as_posix()
        self.cache_key = digest(self.prefix.encode())[:12]  # one parse cache per store
        self._config_bytes = config_path.read_bytes()
        self._config: dict[str, Any] | None = None
        # While the lock is held: directories already found to resolve inside the store.
        self._inside: set[Path] | None = None
        self._cache: ParseCache | None = None
        self._held = False  # this process holds the store lock (shared or exclusive)
        self.warnings: list[str] = []  # said by the last write, for the command's output
        self.standing: list[str] = []  # said of the store itself (a missing merge driver), with every write
        self.objects: Objects | None = None  # in-process commits (statedir.gitops.libgit), for long-lived callers
        self.commits = 0  # commits made through this Store (persist counts them)
        self.expected: str | None = None  # the commit a caller last read: checked as its write takes the lock
        self.trailers: dict[str, str] = {}  # added to every commit made meanwhile (a replay's origin)

    @property
    def config_bytes(self) -> bytes:
        """statedir.yaml as the store was opened with it."""
        return self._config_bytes

    def reopened_config(self) -> None:
        """Read statedir.yaml again (statedir changed it: `statedir people`)."""
        self._config_bytes = (self.root / CONFIG).read_bytes()
        self._config = None

    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            def parse() -> tuple[Any, bool]:
                from statedir.files import yaml, yaml_own

                config = yaml_own.read_own(self._config_bytes, schema_ref(CONFIG))
                if config is yaml_own.FOREIGN:  # edited by hand: ruamel reads it
                    config = yaml.to_plain(yaml.load(self._config_bytes, CONFIG))
                problems = schema.validate("store-config", config, CONFIG)
                if problems:
                    raise CorruptStore(f"{problems[0]}; fix {self.root / CONFIG}", file=CONFIG)
                return config, False

            self._config = self.cache().through(schema.cache_kind("store-config"), self._config_bytes, parse)[0]
        return self._config  # type: ignore[return-value]

    def lock_timeout(self, override: float | None = None) -> float:
        if override is not None:
            return check_timeout(override)
        try:
            value = self.config.get("lock_timeout", DEFAULT_LOCK_TIMEOUT)
        except StatedirError:  # a broken config is reported by whatever reads it (validate lists it)
            return DEFAULT_LOCK_TIMEOUT
        return check_timeout(value) if isinstance(value, (int, float)) else DEFAULT_LOCK_TIMEOUT

    # --- paths ------------------------------------------------------------------------------
    def path(self, rel: str) -> Path:
        """The absolute path of a store file, refusing anything that leaves the store."""
        target = self.root / rel
        parent = target.parent
        if self._inside is None or parent not in self._inside:
            real_parent = Path(os.path.realpath(parent))
            if real_parent != self.root and self.root not in real_parent.parents:
                raise CorruptStore(f"{rel} leads out of the store (a symlinked directory?)", file=rel)
            if self._inside is not None:
                self._inside.add(parent)
        if target.is_symlink():
            raise CorruptStore(f"{rel} is a symlink; statedir does not follow links", file=rel)
        return target

    @property
    def files_worktree(self) -> Path:
        """The work tree of the files runs talk about (`--file`, bus evidence): the store's own,
        but the user's where the store is on a branch of its own (`init --branch`)."""
        if self.worktree == self.root and (self.root / ".git").is_file():
            from statedir.gitops import worktrees

            bound = worktrees.binding(self.worktree)
            if bound is not None and bound[1].resolve() == self.root:
                return git.find_worktree(self.root.parent) or worktrees.main_worktree(self.worktree)
        return self.worktree

    @property
    def cache_dir(self) -> Path:
        """Disposable caches live in the git directory, out of the work tree and the store."""
        return git.git_dir(self.worktree) / "statedir" / f"cache-{self.cache_key}"

    def cache(self) -> ParseCache:
        """The store's parse cache: one per opened store, so a long-lived handle keeps its
        entries in memory between calls."""
        if self._cache is None:
            self._cache = ParseCache(self.cache_dir / "parsed")
        return self._cache

    def git_path(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix != "." else rel

    def run_dir(self, run_id: str) -> str:
        return f"runs/{check_run_id(run_id)}"

    def require_run(self, run_id: str) -> str:
        rel = self.run_dir(run_id)
        if not self.path(f"{rel}/state.yaml").is_file():
            raise UnknownRun(f"no run {run_id!r} in this store; see `statedir runs`", run_id=run_id)
        return rel

    def run_ids(self) -> list[str]:
        runs = self.root / "runs"
        if not runs.is_dir():
            return []
        return sorted(p.name for p in runs.iterdir() if (p / "state.yaml").is_file())

    # --- reading ----------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes | None:
        try:
            return self.path(rel).read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise BadFile(f"{rel} is a directory, not a file", file=rel) from None

    def load(self, rel: str) -> Any:
        """A store file as round-trip YAML data (None when missing)."""
        from statedir.files import yaml

        raw = self.read_bytes(rel)
        return None if raw is None else yaml.load(raw, rel)

    # --- writing ----------------------------------------------------------------------------
    def write_atomic(self, rel: str, data: bytes) -> bool:
        """Replace a file atomically (temp, fsync, rename); False when the bytes are unchanged."""
        target = self.path(rel)
        with contextlib.suppress(FileNotFoundError):
            if target.read_bytes() == data:
                return False
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        return True

    def remove(self, rel: str) -> None:
        """Delete a store file (absent already is fine)."""
        with contextlib.suppress(FileNotFoundError):
            self.path(rel).unlink()

    def append(self, rel: str, text: str, header: str) -> None:
        """Append text at the end of a log, never reading what is already there."""
        target = self.path(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
        fd = os.open(target, flags, 0o644)
        try:
            if os.fstat(fd).st_size == 0:
                text = header + text
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def prune(self, rel: str) -> None:
        """Remove the directories above `rel` that are left empty, up to the store's root."""
        for parent in self.path(rel).parents:
            if parent == self.root or self.root not in parent.parents:
                break
            try:
                parent.rmdir()
            except OSError:  # not empty, or already gone
                if parent.exists():
                    break

    # --- the lock and crash recovery ---------------------------------------------------------
    def _lock_fd(self, *, create: bool) -> int | None:
        """The lock file, opened; None where it cannot be made and `create` is False (a
        read-only checkout: nobody can write there, so readers need no lock)."""
        path = self.root / LOCK
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise CorruptStore(f"the lock file {path} is a symlink; statedir does not follow links "
                                   f"(remove it: rm '{path}')", file=LOCK) from None
            if not create and exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
                return None
            raise WriteFailed(f"cannot open the store lock {path}: {exc.strerror} (a read-only store?)",
                              file=LOCK) from None

    @contextlib.contextmanager
    def locked(self, timeout: float | None = None, *, scope: str = "") -> Iterator[None]:
        """Hold the exclusive store lock (readers arriving while it waits wait for it: see
        statedir.store.locking); waiting longer than the timeout is LOCK_TIMEOUT. A
        transition a dead writer left half done is finished or undone first. Where a caller
        expects a commit (`expected`), HEAD_MOVED unless `scope`, what the write is about (a
        run's folder, a session's file; "" the whole store), is as it was there."""
        if self._held:
            yield
            return
        fd = self._lock_fd(create=True)
        assert fd is not None
        made = self.commits
        limit = self.lock_timeout(timeout)
        deadline = time.monotonic() + limit
        line = contextlib.ExitStack()  # this writer's place in line, left once the lock is
        try:
            line.enter_context(locking.in_line(self.cache_dir.parent / f"queue-{self.cache_key}", limit, deadline))
            locking.acquire(self.root, fd, fcntl.LOCK_EX, limit, deadline)
            self._held = True
            self._inside = set()  # each directory is resolved once per hold of the lock
            self.warnings = list(self.standing)
            journal.recover(self)
            sync_journal.recover(self)  # a sync that died: finished or put back
            expected, self.expected = self.expected, None  # checked once: the call's first hold of the lock
            if expected is not None:
                expectation.check(self, expected, scope)
            yield
        finally:
            self._held = False
            self._inside = None
            os.close(fd)
            line.close()
            if self.commits != made and maintenance.due(self.worktree):  # outside the lock: nobody waits on it
                maintenance.start(self.worktree)

    @contextlib.contextmanager
    def reading(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the lock shared while reading, so a reader never sees half a transition; a
        transition a dead writer left half done is undone first (under the exclusive lock)."""
        if self._held:
            yield
            return
        fd = self._lock_fd(create=False)
        if fd is None:  # a read-only store: no writer can be at work in it
            yield
            return
        try:
            locking.acquire(self.root, fd, fcntl.LOCK_SH, self.lock_timeout(timeout))
            if (self.root / JOURNAL).exists() or sync_journal.dead_sync(self):
                fcntl.flock(fd, fcntl.LOCK_UN)
                expected, self.expected = self.expected, None  # kept for the write it precedes
                try:
                    with self.locked(timeout):
                        pass
                finally:
                    self.expected = expected
                locking.acquire(self.root, fd, fcntl.LOCK_SH, self.lock_timeout(timeout))
            self._held = True
            yield
        finally:
            self._held = False
            os.close(fd)

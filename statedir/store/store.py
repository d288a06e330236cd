"""An opened store: its configuration, its runs, the exclusive lock a writer holds and the shared
one a reader holds, crash recovery as the lock is taken, and the commit a caller expects (its files
on disk, safe paths and atomic writes, are statedir.store.disk's)."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from statedir.errors import CorruptStore, InvalidValue, NotAStore, StatedirError, UnknownRun, WriteFailed
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.gitops import git, maintenance
from statedir.hints import HINT, Hint
from statedir.store import expectation, journal, locking, sync_journal
from statedir.store.discovery import not_a_store
from statedir.store.disk import Disk
from statedir.store.layout import CONFIG, JOURNAL, LOCK, check_run_id, schema_ref

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


class Store(Disk):
    """An opened store: its directory, its git work tree (statedir.store.disk) and its configuration."""

    def __init__(self, root: Path) -> None:
        resolved = root.resolve()
        config_path = resolved / CONFIG
        if not config_path.is_file():
            raise not_a_store(root)
        worktree = git.find_worktree(resolved)
        if worktree is None:
            raise NotAStore(f"store {root} is not inside a git work tree", store=str(root))
        super().__init__(resolved, worktree)
        self._config_bytes = config_path.read_bytes()
        self._config: dict[str, Any] | None = None
        self._held = False  # this process holds the store lock (shared or exclusive)
        self.warnings: list[str] = []  # said by the last write, for the command's output
        self.standing: list[str] = []  # said of the store itself (a missing merge driver), with every write
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
                config = yaml_fast_reader.read_own(self._config_bytes, schema_ref(CONFIG))
                if config is yaml_fast_reader.FOREIGN:  # edited by hand: ruamel reads it
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

    # --- runs ----------------------------------------------------------------------------------
    def run_dir(self, run_id: str) -> str:
        return f"runs/{check_run_id(run_id)}"

    def require_run(self, run_id: str) -> str:
        rel = self.run_dir(run_id)
        if not self.path(f"{rel}/state.yaml").is_file():
            raise UnknownRun(f"no run {run_id!r} in this store; see `{HINT}`", run_id=run_id, hint=Hint("runs"))
        return rel

    def run_ids(self) -> list[str]:
        runs = self.root / "runs"
        if not runs.is_dir():
            return []
        return sorted(p.name for p in runs.iterdir() if (p / "state.yaml").is_file())

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

    @contextlib.contextmanager
    def expecting(self, rev: str | None) -> Iterator[None]:
        """Writes made meanwhile expect `rev` (None: expect nothing): the first to take the lock checks it
        (statedir.store.expectation)."""
        self.expected = rev
        try:
            yield
        finally:
            self.expected = None

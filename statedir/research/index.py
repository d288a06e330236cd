"""The disposable SQLite index of the research files, kept beside the parse cache in the
git directory (never in the work tree, never a source of truth).

It remembers the commit it reflects. A write updates it with the records it committed; a
reader whose HEAD moved on (a merge, a pull, another statedir command) re-reads only the
research files `git diff` names between that commit and HEAD, so no query scans the store.
A missing, corrupt or older-format database is thrown away and rebuilt from the files.
"""
from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from statedir.gitops import git
from statedir.research import dedup, records
from statedir.research.errors import IndexUnavailable
from statedir.research.kinds import KINDS, ROOT, Kind, parse_rel
from statedir.store.disk import Store

T = TypeVar("T")
VERSION = 1  # PRAGMA user_version; any other value is rebuilt, never migrated
EXTRA = {"source": ("url_norm", "hint_key")}  # dedup keys, never shown by queries
INDEXED = ("questions.project_id", "hypotheses.question_id", "experiments.hypothesis_id", "runs.skill",
           "runs.question_id", "runs.experiment_id", "runs.started_at", "results.run_id", "claims.run_id",
           "sources.project_id", "sources.doi", "sources.url_norm", "sources.hint_key",
           "evidence.source_id", "evidence.question_id", "evidence.hypothesis_id")


def _ddl() -> str:
    tables = [f"CREATE TABLE IF NOT EXISTS {k.folder} "
              f"({', '.join(k.columns + EXTRA.get(k.name, ()))}, PRIMARY KEY (id))" for k in KINDS.values()]
    indexes = [f"CREATE INDEX IF NOT EXISTS idx_{c.replace('.', '_')} ON {c.split('.')[0]}({c.split('.')[1]})"
               for c in INDEXED]
    return ";\n".join(["CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)", *tables, *indexes]) + ";"


def path_of(store: Store) -> Path:
    return git.git_dir(store.worktree) / "statedir" / f"research-{store.cache_key}.sqlite"


class Index:
    """An open connection to a store's index; `sync()` brings it up to HEAD."""

    def __init__(self, store: Store, *, create: bool = True) -> None:
        self.store = store
        self.path = path_of(store)
        self.last_sync: dict[str, Any] = {}
        self.conn: sqlite3.Connection | None = None
        if create or self.path.exists():
            self.conn = self._open()

    # --- opening and healing ------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = None
        try:
            conn = self._connect()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if version == VERSION:
                return conn
            conn.close()
            if version != 0 or tables:  # another format: rebuilt, never migrated
                self.wipe()
        except sqlite3.DatabaseError as exc:  # not a database: corrupt, so rebuilt
            if conn is not None:
                conn.close()
            if busy(exc):
                raise IndexUnavailable(f"the research index stayed locked: {exc}") from None
            self.wipe()
        return self._create()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous = OFF")  # disposable: a crash costs a rebuild, not data
        return conn

    def wipe(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _create(self) -> sqlite3.Connection:
        conn = self._connect()
        # Two processes may heal at once: IF NOT EXISTS makes the second creation a no-op.
        conn.executescript(f"BEGIN IMMEDIATE;\n{_ddl()}\nPRAGMA user_version = {VERSION};\nCOMMIT;")
        return conn

    @contextlib.contextmanager
    def _transaction(self, conn: sqlite3.Connection | None = None) -> Iterator[sqlite3.Connection]:
        conn = conn or self.conn
        assert conn is not None
        if not conn.in_transaction:
            conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    # --- keeping up with the files --------------------------------------------------------------
    def synced_head(self, conn: sqlite3.Connection) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
        return row[0] if row else None

    def sync(self, *, full: bool = False) -> dict[str, Any]:
        """Bring the index up to HEAD: the files named by `git diff` since the commit it
        reflects, or every research file when it is new, unrelated or `full` is asked."""
        assert self.conn is not None
        if not full:  # the common case, up to date, is one read and no write transaction
            head = git.head(self.store.worktree)
            if head is not None and self.synced_head(self.conn) == head:
                self.last_sync = {"rebuilt": "incremental", "files_read": 0, "head": head}
                return self.last_sync
        with self._transaction() as conn:
            head = git.head(self.store.worktree)
            synced = self.synced_head(conn)
            changed = None if (full or synced is None) else self._changed(synced, head)
            if changed is None:
                for kind in KINDS.values():
                    conn.execute(f"DELETE FROM {kind.folder}")
                count = self._read_all(conn)
                mode = "full"
            else:
                for rel in changed:
                    self._refresh(conn, rel)
                count, mode = len(changed), "incremental"
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
        self.last_sync = {"rebuilt": mode, "files_read": count, "head": head}
        return self.last_sync

    def _changed(self, synced: str, head: str | None) -> list[str] | None:
        if synced == head:
            return []
        spec = self.store.git_path(ROOT)
        proc = git.run(self.store.worktree, "diff", "--name-only", "--no-renames", "-z", synced, head or "HEAD",
                       "--", spec, check=False)
        if proc.returncode != 0:
            return None  # the old commit is gone (history rewritten): read everything
        prefix = "" if self.store.prefix == "." else self.store.prefix + "/"
        names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
        return [n[len(prefix):] for n in names if n.startswith(prefix)]

    def _read_all(self, conn: sqlite3.Connection) -> int:
        """Index every research file; each folder is checked to lie inside the store once,
        then its regular files are read directly (symlinks are never followed)."""
        count = 0
        for kind in KINDS.values():
            folder = self.store.path(f"{ROOT}/{kind.folder}/-.yaml").parent  # refuses a folder leading out
            if not folder.is_dir() or folder.is_symlink():
                continue
            for name, path in sorted(_files(folder)):
                rel = f"{ROOT}/{kind.folder}/{name}"
                if parse_rel(rel) is None:
                    continue
                with open(path, "rb") as file:
                    self._upsert(conn, kind, records.parse(file.read(), rel))
                count += 1
        return count

    def _refresh(self, conn: sqlite3.Connection, rel: str) -> None:
        parsed = parse_rel(rel)
        if parsed is None:
            return
        kind, entity_id = parsed
        raw = self.store.read_bytes(rel)
        if raw is None:
            conn.execute(f"DELETE FROM {kind.folder} WHERE id = ?", (entity_id,))
            return
        self._upsert(conn, kind, records.parse(raw, rel))

    def _upsert(self, conn: sqlite3.Connection, kind: Kind, record: dict[str, Any]) -> None:
        row = kind.row(record)
        if kind.name == "source":
            row.update(dedup.keys(record))
        names = list(row)
        conn.execute(f"INSERT OR REPLACE INTO {kind.folder} ({', '.join(names)}) "
                     f"VALUES ({', '.join('?' * len(names))})", [row[n] for n in names])

    def written(self, items: Iterable[tuple[Kind, dict[str, Any]]], parent: str | None, head: str) -> None:
        """After a commit: add what it wrote; when the index reflected its parent, it now
        reflects the new commit (otherwise the next sync catches up from where it was)."""
        with self._transaction() as conn:
            for kind, record in items:
                self._upsert(conn, kind, record)
            if self.synced_head(conn) == parent:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))

    # --- reading --------------------------------------------------------------------------------
    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        assert self.conn is not None
        out = []
        for row in self.conn.execute(sql, params):
            record = dict(row)
            if "synthetic" in record and record["synthetic"] is not None:
                record["synthetic"] = bool(record["synthetic"])
            out.append(record)
        return out


def busy(exc: sqlite3.Error) -> bool:
    """Lock contention (wait and report), as opposed to a damaged database (rebuild)."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def using(store: Store, read: Callable[[Index], T], *, full: bool = False) -> T:
    """`read` on the index brought up to HEAD; a database found damaged on the way (a torn
    page, a missing table) is thrown away and rebuilt once from the files."""
    for attempt in (1, 2):
        index = Index(store)
        try:
            index.sync(full=full)
            return read(index)
        except sqlite3.Error as exc:
            if busy(exc):
                raise IndexUnavailable(f"the research index stayed locked: {exc}") from None
            index.close()
            index.wipe()
            if attempt == 2:
                raise IndexUnavailable(f"the research index cannot be rebuilt: {exc}") from None
        finally:
            index.close()
    raise AssertionError("unreachable")


def _files(folder: Path) -> Iterator[tuple[str, str]]:
    import os

    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".yaml") and entry.is_file(follow_symlinks=False):
                yield entry.name, entry.path

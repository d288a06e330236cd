"""The disposable SQLite index of the research files, kept beside the parse cache in the
git directory (never in the work tree, never a source of truth).

It remembers the commit it reflects, and holds exactly that commit's research files: read
from the commit's blobs (`committed`), never from the work tree, which need not agree with
HEAD. A write updates it with the records it committed; a reader whose HEAD moved on (a merge,
a pull, a reset) re-reads only the blobs `git diff` names between that commit and HEAD, so no
query scans the store. A missing, corrupt or older-format database is thrown away and rebuilt;
one that cannot be opened or written here (a read-only checkout) is left alone, and the
question is answered from the commit's files in a database in memory.
"""
from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from statedir.gitops import git
from statedir.research import committed, dedup, records
from statedir.research.errors import IndexUnavailable
from statedir.research.kinds import KINDS, Kind, parse_rel
from statedir.store.store import Store

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


def wipe(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class Index:
    """An open connection to a store's index; `sync()` brings it up to HEAD."""

    def __init__(self, store: Store, *, create: bool = True, memory: bool = False) -> None:
        self.store = store
        self.path = path_of(store)
        self.last_sync: dict[str, Any] = {}
        self.conn: sqlite3.Connection | None = None
        if memory:  # nothing on disk: built whole by the first sync
            self.conn = self._create(":memory:")
        elif create or self.path.exists():
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
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            if busy(exc):
                raise IndexUnavailable(f"the research index stayed locked: {exc}") from None
            if not damaged(exc):
                raise  # cannot be opened here (no permission, read-only): never thrown away for that
            self.wipe()
        return self._create()

    def _connect(self, target: str | Path | None = None) -> sqlite3.Connection:
        conn = sqlite3.connect(target or self.path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous = OFF")  # disposable: a crash costs a rebuild, not data
        return conn

    def wipe(self) -> None:
        wipe(self.path)

    def _create(self, target: str | None = None) -> sqlite3.Connection:
        conn = self._connect(target)
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
        """Bring the index up to HEAD: the blobs of the files `git diff` names since the commit
        it reflects, or of every research file of HEAD when it is new, unrelated or `full`."""
        assert self.conn is not None
        if not full:  # the common case, up to date, is one read and no write transaction
            head = git.head(self.store.worktree)
            if head is not None and self.synced_head(self.conn) == head:
                self.last_sync = {"rebuilt": "incremental", "files_read": 0, "head": head}
                return self.last_sync
        with self._transaction() as conn:
            head = git.head(self.store.worktree)
            synced = self.synced_head(conn)
            changed = None if (full or synced is None) else committed.changed(self.store, synced, head)
            mode = "incremental" if changed is not None else "full"
            if changed is None:
                for kind in KINDS.values():
                    conn.execute(f"DELETE FROM {kind.folder}")
                changed = committed.listing(self.store, head)
            count = self._load(conn, changed)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
        self.last_sync = {"rebuilt": mode, "files_read": count, "head": head}
        return self.last_sync

    def _load(self, conn: sqlite3.Connection, files: dict[str, str | None]) -> int:
        """Index each research file at its blob (None: drop its record); how many were named."""
        present: dict[str, str] = {}
        for rel, oid in files.items():
            parsed = parse_rel(rel)
            if parsed is None:
                continue
            if oid is None:
                conn.execute(f"DELETE FROM {parsed[0].folder} WHERE id = ?", (parsed[1],))
            else:
                present[rel] = oid
        for rel, raw in committed.blobs(self.store, present):
            self._upsert(conn, parse_rel(rel)[0], records.parse(raw, rel))  # type: ignore[index]
        return len(files)

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


def damaged(exc: sqlite3.Error) -> bool:
    """A database found damaged (thrown away and rebuilt): not one, a torn page, a missing
    table; as opposed to one this process cannot open or write (answered from the files)."""
    name = getattr(exc, "sqlite_errorname", "")
    return name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or (name == "SQLITE_ERROR" and "no such" in str(exc))


def using(store: Store, read: Callable[[Index], T], *, full: bool = False) -> T:
    """`read` on the index brought up to HEAD. A database found damaged on the way is thrown
    away and rebuilt once; one that cannot be opened or written here (a read-only checkout, a
    git directory of another user's) is left as it is, and `read` runs on HEAD's files
    indexed in memory instead."""
    for attempt in (1, 2):
        index = None
        try:
            index = Index(store)
            index.sync(full=full)
            return read(index)
        except sqlite3.Error as exc:
            if busy(exc):
                raise IndexUnavailable(f"the research index stayed locked: {exc}") from None
            if index is not None:
                index.close()
            if not damaged(exc) or attempt == 2 or not _wiped(store):
                break
        except OSError:  # its folder cannot be made (read-only)
            break
        finally:
            if index is not None:
                index.close()
    index = Index(store, memory=True)
    try:
        index.sync(full=True)
        return read(index)
    finally:
        index.close()


def _wiped(store: Store) -> bool:
    """Throw a damaged index away; False where that is not allowed here."""
    try:
        wipe(path_of(store))
    except OSError:
        return False
    return True

"""The research ledger's write path: decide on a ResearchDraft, then one `persist()` under the lock.

A decision reads the files it needs (the truth), refuses with a StatedirError or puts the
records it makes or changes on the ResearchDraft; only then are they validated, written and
committed together, and the index told what the commit holds.
"""
from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from statedir.files import schema
from statedir.gitops import commit_message, git
from statedir.research import arrival, records, rules
from statedir.research.errors import IndexUnavailable
from statedir.research.index import Index, damaged, path_of, using, wipe
from statedir.research.kinds import ROOT, Kind, mint_id, now
from statedir.store.store import Store
from statedir.store.write import persist


class ResearchDraft:
    """The records one action writes, and the reads it decides on (its own writes first)."""

    def __init__(self, store: Store, moment: datetime) -> None:
        self.store = store
        self.moment = moment
        self.items: dict[str, tuple[Kind, dict[str, Any]]] = {}  # rel -> (kind, record)

    def mint(self, kind: Kind) -> str:
        return mint_id(kind, self.moment, lambda candidate: kind.rel(candidate) in self.items
                       or self.store.path(kind.rel(candidate)).exists())

    def put(self, kind: Kind, record: dict[str, Any]) -> dict[str, Any]:
        self.items[kind.rel(record["id"])] = (kind, record)
        return record

    def get(self, kind: Kind, entity_id: str) -> dict[str, Any] | None:
        mine = self.items.get(kind.rel(entity_id))
        return dict(mine[1]) if mine else records.read(self.store, kind, entity_id)

    def require(self, kind: Kind, entity_id: str) -> dict[str, Any]:
        mine = self.items.get(kind.rel(entity_id))
        return dict(mine[1]) if mine else records.require(self.store, kind, entity_id)

    def check(self) -> None:
        """Every record against the ledger's rules (`rules.check`), as verify will hold the commit."""
        def exists(kind: Kind, entity_id: str) -> bool:
            rel = kind.rel(entity_id)
            return rel in self.items or self.store.path(rel).exists()

        befores = {rel: self.store.read_bytes(rel) for rel in self.items}
        added = [record["id"] for rel, (kind, record) in self.items.items() if befores[rel] is None]
        history = arrival.History(self.store, git.head(self.store.worktree), pending=added)
        for rel, (kind, record) in self.items.items():
            raw = befores[rel]
            rules.check(kind, record["id"], records.parse(raw, rel) if raw is not None else None, record, exists,
                        self.get, history.later)

    def lookup(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        """Rows from the index, brought up to HEAD first (the lock is held, so HEAD holds
        every record; the index is rebuilt if found damaged)."""
        return using(self.store, lambda index: index.rows(sql, params))


Decision = Callable[[ResearchDraft], dict[str, Any]]


def commit(store: Store, decide: Decision, *, summary: Callable[[dict[str, Any]], str], actor: str,
           run_id: Callable[[dict[str, Any]], str] = lambda _: "-",
           lock_timeout: float | None = None) -> dict[str, Any]:
    """Decide, then write and commit what was decided as one commit; returns the decision's
    result with `commit` (null when nothing needed writing, e.g. a deduplicated Source)."""
    with store.locked(lock_timeout, scope=ROOT):
        draft = ResearchDraft(store, now())
        result = decide(draft)
        if not draft.items:
            return {**result, "commit": None}
        draft.check()
        writes = {rel: records.dump(store, kind, record) for rel, (kind, record) in draft.items.items()}
        writes.update(_schema_copies(store, {kind for kind, _ in draft.items.values()}))
        parent = git.head(store.worktree)
        message = commit_message.message(summary(result), run_id(result), actor, "research")
        sha = persist(store, writes=writes, message=message, author=actor)
        _tell_index(store, list(draft.items.values()), parent, sha)
    return {**result, "commit": sha}


def _schema_copies(store: Store, kinds: set[Kind]) -> dict[str, bytes]:
    """The store's `.schemas/` copies of these kinds' schemas, where missing or outdated
    (a store made before the ledger existed gains them with its first research commit)."""
    out = {}
    for kind in kinds:
        data = schema.schema_path(kind.schema).read_bytes()
        rel = f".schemas/{kind.schema}.schema.json"
        if store.read_bytes(rel) != data:
            out[rel] = data
    return out


def _tell_index(store: Store, items: list[tuple[Kind, dict[str, Any]]], parent: str | None, sha: str) -> None:
    """Add the commit's records to an existing index. One that cannot take them still reflects
    the commit it did (its update is one transaction), so the next query catches up from there;
    one found damaged is dropped (the next query rebuilds it: it is never a source of truth)."""
    if not path_of(store).exists():
        return  # the next query builds it whole
    index = None
    try:
        index = Index(store, create=False)
        index.written(items, parent, sha)
    except sqlite3.Error as exc:
        if index is not None:
            index.close()
            index = None
        if damaged(exc):
            with contextlib.suppress(OSError):
                wipe(path_of(store))
    except (IndexUnavailable, OSError):
        pass
    finally:
        if index is not None:
            index.close()

"""A store commit as history reads it back: the transition its trailers record and the store files
it changed (`Commit`, parsed by statedir.history.verify from `git log --raw`), and what a
subsystem's replay reads history through (`HistoryReader`; statedir.history.snapshot.CommitReader is the
one). Plain data, below every replay: history's, the bus's and the research ledger's."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from statedir.gitops.objects import ObjectReader
    from statedir.store.store import Store


@dataclass
class Commit:
    """One commit as verify reads it from `git log --raw`."""

    sha: str
    parents: list[str]
    run_id: str
    actor: str
    action: str
    request: dict[str, Any] | None
    # store-relative path -> (status letter, old blob id, new blob id); a zero id where absent
    changed: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)  # store-relative path -> its new git mode
    repairs: str | None = None  # a doctor repair commit's Statedir-Repairs-Merge: the merge it repairs
    who: dict[str, str] = field(default_factory=dict)  # its identity trailers (statedir.gitops.identity)

    @property
    def parent(self) -> str | None:
        return self.parents[0] if self.parents else None


class HistoryReader(Protocol):
    """The store's files at any commit, as a replay reads them."""

    store: Store
    objects: ObjectReader

    def spec(self, commit: str, rel: str) -> str:
        """`<commit>:<path>`, the git revision of store file `rel` at `commit`."""
        ...

    def raw(self, oid: str) -> bytes:
        """The bytes of blob `oid` (CORRUPT_STORE where it is missing)."""
        ...

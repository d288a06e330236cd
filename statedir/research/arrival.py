"""When each research Source arrived, by history rather than by what its record claims: the
order aliasing goes by (statedir.research.aliases). A record's `created_at` is only what its
writer says, so it never decides which of two Sources naming one document stays the Source.

History orders two Sources where it can: the one whose adding commit is an ancestor of the
other's was there first. Two registered apart (on two machines, neither commit holding the
other) history cannot order; `sync` then keeps what this clone already shared with the remote
(the merge base's), then what the remote had, over what only this clone had, and elsewhere
their `created_at` (held to its commit's date by verify, CLOCK_SKEW) and then id decide.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from statedir.gitops import git
from statedir.research import records
from statedir.research.kinds import KINDS
from statedir.store.store import Store

SOURCE = KINDS["source"]
# How far a record's own time (created_at, started_at, ts) may lie from the author date of the
# commit that adds it: machines' clocks and a commit made a while after its decision, never more.
CLOCK_SKEW = 24 * 3600

Rank = Callable[[str], Any]  # a Source id -> what orders concurrent Sources (smaller: earlier)


class History:
    """The adding commit of each Source reachable from `at` (None: none yet), and their ancestry.
    `pending` are Sources a commit being made (or replayed) adds: they come after everything."""

    def __init__(self, store: Store, at: str | None, pending: Iterable[str] = ()) -> None:
        self.store = store
        self.at = at
        self.pending = set(pending)
        self._adders: dict[str, str | None] = {}
        self._ancestry: dict[tuple[str, str], bool] = {}

    def adder(self, source_id: str) -> str | None:
        if source_id not in self._adders:
            self._load([source_id])
        return self._adders[source_id]

    def _load(self, ids: list[str]) -> None:
        wanted = [i for i in ids if i not in self._adders]
        for source_id in wanted:
            self._adders[source_id] = None
        wanted = [i for i in wanted if i not in self.pending]
        if not wanted or self.at is None:
            return
        paths = [self.store.git_path(SOURCE.rel(i)) for i in wanted]
        out = git.run(self.store.worktree, "-c", "core.quotePath=false", "log", "--full-history", "--diff-filter=A",
                      "--format=%x00%H", "--name-only", self.at, "--", *paths).stdout.decode("utf-8", "replace")
        for block in out.split("\0")[1:]:  # newest first: the last block naming a file is its first adding
            sha, *names = block.split("\n")
            for name in names:
                if name.endswith(".yaml"):
                    source_id = name.rsplit("/", 1)[-1][:-5]
                    if source_id in self._adders:
                        self._adders[source_id] = sha.strip()

    def _ancestor(self, older: str, newer: str) -> bool:
        if (older, newer) not in self._ancestry:
            self._ancestry[older, newer] = git.run(self.store.worktree, "merge-base", "--is-ancestor", older, newer,
                                                   check=False).returncode == 0
        return self._ancestry[older, newer]

    def later(self, one: str, other: str) -> bool:
        """Whether Source `one` provably arrived after `other`: added in a commit that has
        `other`'s adding commit as an ancestor, or by the commit being made while `other` was there."""
        self._load([one, other])
        if one in self.pending:
            return other not in self.pending
        first, second = self._adders[other], self._adders[one]
        if first is None or second is None or first == second:
            return False
        return self._ancestor(first, second)

    def earliest(self, ids: Iterable[str], rank: Rank) -> str:
        """Of `ids`, one no other provably came before; among those, the smallest by `rank`."""
        ids = sorted(ids)
        self._load(ids)
        first = [i for i in ids if not any(self.later(i, other) for other in ids if other != i)]
        return min(first or ids, key=lambda i: (rank(i), i))


def earliest(store: Store, sources: dict[str, dict[str, Any]], held: list[set[str]] | None = None
             ) -> Callable[[list[str]], str]:
    """The earliest of a group of `sources` (id -> record) by the history of HEAD; concurrent ones
    by the first of the sets `held` (in order; by default the upstream's, `upstream_held`)
    holding each, then the `created_at` they claim."""
    history = History(store, git.head(store.worktree))
    held = held if held is not None else upstream_held(store)

    def rank(source_id: str) -> tuple[int, str]:
        place = next((n for n, ids in enumerate(held) if source_id in ids), len(held))
        return place, str(sources.get(source_id, {}).get("created_at") or "")

    return lambda ids: history.earliest(ids, rank)


def upstream_held(store: Store) -> list[set[str]]:
    """Where no caller says what is shared (validate, doctor, a registration): the Sources the
    branch's upstream holds, which every clone of the remote already has, come first. Without
    an upstream, those a merge at HEAD brought in from its other parents."""
    worktree = store.worktree
    upstream = git.run(worktree, "rev-parse", "--verify", "-q", "@{upstream}", check=False).stdout.decode().strip()
    if upstream:
        return [set(held_at(store, upstream))]
    parents = git.run(worktree, "rev-parse", "--verify", "-q", "HEAD^2", check=False).stdout.decode().strip()
    return [set(held_at(store, parents))] if parents else []


def held_at(store: Store, commit: str) -> list[str]:
    """The ids of the Sources `commit` holds."""
    folder = store.git_path(SOURCE.rel("x"))[: -len("x.yaml")]
    out = git.run(store.worktree, "-c", "core.quotePath=false", "ls-tree", "--name-only", commit, "--",
                  folder).stdout.decode("utf-8", "replace")
    return [line.rsplit("/", 1)[-1][:-5] for line in out.splitlines() if line.endswith(".yaml")]


def shared_first(store: Store, ours: str, theirs: str) -> list[list[str]]:
    """Where history cannot order two Sources, sync keeps first what this clone already shared
    with the remote (the merge base's Sources), then what the remote has, over its own alone."""
    base = git.run(store.worktree, "merge-base", ours, theirs, check=False).stdout.decode().strip()
    return [held_at(store, base) if base else [], held_at(store, theirs)]


def overruled(store: Store, ours: str, shared: list[str], head: str = "HEAD") -> list[dict[str, Any]]:
    """Each Source this clone already shared (`shared`) that what came in made an alias of one it
    had not: {commit, file, message}. The remote cannot say a Source known here came after one it
    brings; history holds the other order."""
    known = set(shared)
    folder = store.git_path(SOURCE.rel("x"))[: -len("x.yaml")]
    changed = git.run(store.worktree, "-c", "core.quotePath=false", "diff", "--name-only", "--diff-filter=M", ours,
                      head, "--", folder).stdout.decode("utf-8", "replace").splitlines()
    out = []
    for path in changed:
        source_id = path.rsplit("/", 1)[-1][:-5]
        rel = SOURCE.rel(source_id)
        raw = git.run(store.worktree, "cat-file", "blob", f"{head}:{path}", check=False).stdout
        alias = records.parse(raw, rel).get("alias_of") if raw else None
        if source_id not in known or alias is None or alias in known:
            continue
        setter = git.run(store.worktree, "log", "-1", "--format=%H", f"{ours}..{head}", "--", path).stdout.decode()
        out.append({"kind": "illegal", "commit": setter.strip() or None, "file": rel,
                    "message": f"source {source_id}, which this clone already shared, is made an alias of {alias}, "
                               "which it had not: what comes in cannot put a Source known here after one it brings"})
    return out

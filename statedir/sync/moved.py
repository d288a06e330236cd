"""A sync where something moved (statedir.sync.entry found it, and holds the lock): the
exchange with the remote (statedir.sync.exchange), or, where there is nothing to exchange but a
plain `git pull` took commits since the one verified last, those commits verified."""
from __future__ import annotations

from typing import Any

from statedir.store.store import Store
from statedir.sync import exchange, verified
from statedir.sync.entry import Start


def sync(store: Store, start: Start, *, actor: str, replay: bool = False) -> dict[str, Any] | None:
    """The exchange's result, {remote, branch, status: pushed|fast_forward|merged|replayed, pushed, commit,
    attempts, summary}; with `replay`, a refused merge is resolved by replaying (statedir.sync.replay),
    and the result says what was replayed, refused and skipped, and where the originals are kept.
    None where there was nothing to exchange and what a plain `git pull` took verified (a finding
    refuses the sync): it is then up to date (statedir.sync.entry.up_to_date)."""
    if start.head is None:
        return exchange.exchange(store, start.name, start.branch, start.url, actor=actor, replay=replay)
    verified.check_taken(store, start.name, start.branch, start.head)
    return None

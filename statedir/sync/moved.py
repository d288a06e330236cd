"""A sync where something moved (statedir.sync.entry found it, and holds the lock): the
exchange with the remote (statedir.sync.exchange), or, where there is nothing to exchange but a
plain `git pull` took commits since the one verified last, those commits verified."""
from __future__ import annotations

from typing import Any

from statedir.store.store import Store
from statedir.sync import exchange, verified
from statedir.sync.entry import Start, up_to_date


def sync(store: Store, start: Start, *, actor: str, replay: bool = False) -> dict[str, Any]:
    """{remote, branch, status: up_to_date|pushed|fast_forward|merged|replayed, pushed, commit, attempts,
    summary}; with `replay`, a refused merge is resolved by replaying (statedir.sync.replay), and
    the result says what was replayed, refused and skipped, and where the originals are kept."""
    if start.head is not None:  # nothing to exchange: what a plain `git pull` took is checked (and refused)
        verified.check_taken(store, start.name, start.branch, start.head)
        return up_to_date(start)
    return exchange.exchange(store, start.name, start.branch, start.url, actor=actor, replay=replay)

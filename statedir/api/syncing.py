"""`sync` through a Store alone: the CLI's `statedir sync` (and StateDir.sync) without StateDir,
whose import loads the engine and the rules a sync that exchanges nothing never uses."""
# Lazy imports: gitops.merge_driver_config, gitops.identity, sync.entry: loaded by the call that opens the store
#   for a sync, not when `statedir.api` is imported; sync.moved (the exchange, about 75 modules) only where the
#   remote's branch or this one moved.
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.store.layout import JOURNAL
from statedir.store.store import Store


def prepared(store: Store, lock_timeout: float | None) -> Store:
    """What opening a store does (StateDir's too): the missing merge driver's warning made the
    store's standing one, and a transition a dead writer left half done rolled back before
    anyone reads its half."""
    from statedir.gitops import merge_driver_config

    missing = merge_driver_config.warning(store.root, store.worktree)
    store.standing = [missing] if missing else []
    if (store.root / JOURNAL).exists():
        with store.locked(lock_timeout):
            pass
    return store


def opened(path: Path, lock_timeout: float | None = None) -> Store:
    return prepared(Store(path), lock_timeout)


def sync(store: Store, remote: str | None, *, actor: str, expect: str | None = None, replay: bool = False,
         lock_timeout: float | None = None) -> dict[str, Any]:
    """statedir.sync.moved.sync under the lock statedir.sync.entry takes, `expect` (about the whole
    store) checked as it takes it; where nothing moved (or a plain `git pull`'s commits verify),
    `up_to_date`."""
    from statedir.gitops.identity import check_name
    from statedir.sync import entry

    checked = check_name(actor, "actor")
    with store.expecting(expect):
        with entry.started(store, remote, lock_timeout) as start:
            if not start.still:  # no fetch and no scan of the work tree where nothing moved
                from statedir.sync import moved

                exchanged = moved.sync(store, start, actor=checked, replay=replay)
                if exchanged is not None:
                    return exchanged
        return entry.up_to_date(store, start)

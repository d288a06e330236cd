"""The one write path's lower half: files written atomically, logs appended, one commit.

Every subsystem (runs, the handoff bus, the research ledger, rollback) decides what to write
and then calls `persist` while holding the store lock; this is the only code that writes
store files and commits them.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from statedir import faults, git
from statedir.errors import WriteFailed
from statedir.store import Store


def persist(store: Store, *, writes: Mapping[str, bytes], appends: Iterable[tuple[str, str, str]] = (),
            removes: Iterable[str] = (), message: str, author: str) -> str:
    """Write `writes` (store-relative path -> bytes) atomically, append each `(path, text, header)`
    to its log, delete `removes`, and commit exactly those paths; returns the commit.

    The caller holds the store lock. Any failure rolls every touched file back to what it was
    before this call, then surfaces (an OSError as IO_ERROR).
    """
    appends = list(appends)
    removes = list(removes)
    touched = sorted({*writes, *(rel for rel, _, _ in appends), *removes})
    created = [store.git_path(rel) for rel in touched if not store.path(rel).exists()]
    try:
        store.begin(touched)
        faults.point("before_write")
        for i, (rel, data) in enumerate(writes.items()):
            store.write_atomic(rel, data)
            if i == 0:
                faults.point("between_files")
        for rel, entry_text, header in appends:
            store.append(rel, entry_text, header)
        for rel in removes:
            store.remove(rel)
        faults.point("after_write")
        sha = git.commit(store.worktree, [store.git_path(rel) for rel in touched], message,
                         author=author, created=created)
    except OSError as exc:
        store.recover()
        raise WriteFailed(f"writing the store failed: {exc.strerror or exc}; nothing was changed") from None
    except BaseException:
        store.recover()  # roll back whatever stopped the transition, then let it surface
        raise
    faults.point("after_commit")
    store.end()
    return sha

"""The journal of a running sync: where it started and what it is doing, on disk before anything moves.

A sync that is killed cannot put anything back itself, so where it started (statedir.store.
sync_start: the branch's commit, the index, the tracked files the work tree lacks) is saved under
`.git/statedir/` before anything moves (`record`), with what it is doing: merging (`sync`),
replaying (with the ref that keeps the originals, written before the branch moves), or pushing
a finished replay. The next command that takes the store lock (and `doctor --fix`) finishes a
replay that was pushing (the next sync pushes it) and otherwise puts everything back (`recover`).
Every lock checks for the journal (one stat); only a dead sync's recovery reads it.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statedir.errors import CorruptStore, GitError
from statedir.gitops import git, index_lock
from statedir.store import sync_start

if TYPE_CHECKING:
    from statedir.store.disk import Disk

JOURNAL = "sync.json"  # in .git/statedir/: where a running sync started and what it is doing
SAVED_INDEX = "sync.index"  # beside it: the index as it was
UNDONE = "refs/statedir/undone/"  # a branch an undone sync found with commits of someone else's on it


def _folder(store: Disk) -> Path:
    return git.git_dir(store.worktree) / "statedir"


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def record(store: Disk, point: sync_start.SyncStart, phase: str, *, kept: str | None = None,
           replayed: str | None = None) -> None:
    """Save where the sync started and what it does now (`sync`, `replaying`, `pushing`), before it does it."""
    folder = _folder(store)
    folder.mkdir(parents=True, exist_ok=True)
    if phase == "sync" and point.index is not None:
        _write(folder / SAVED_INDEX, point.index)
    _write(folder / JOURNAL, json.dumps({"head": point.head, "index": point.index is not None,
                                          "missing": sorted(point.missing), "phase": phase, "kept": kept,
                                          "replayed": replayed}).encode())


def recorded(store: Disk) -> dict[str, Any] | None:
    """The running (or dead) sync's record, None where there is none."""
    try:
        record = json.loads((_folder(store) / JOURNAL).read_bytes())
        if not isinstance(record, dict) or not isinstance(record.get("missing"), list):
            raise ValueError
    except FileNotFoundError:
        return None
    except ValueError:
        raise CorruptStore(f"the sync journal {_folder(store) / JOURNAL} cannot be read (edited by hand?); "
                           "delete it and check the branch with `git reflog`", file=JOURNAL) from None
    return record


def dead_sync(store: Disk) -> bool:
    """Whether a sync's record is on disk (a reader holding the lock shared: its writer died)."""
    return (_folder(store) / JOURNAL).exists()


def clear(store: Disk) -> None:
    """The sync is over: its record goes (the saved index last)."""
    for name in (JOURNAL, SAVED_INDEX):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_folder(store) / name)


def recover(store: Disk) -> None:
    """Finish or undo a sync that died (under the exclusive store lock); a no-op where none did.
    First, git's index lock a killed statedir's git left is released (statedir.gitops.git_owner)."""
    gitdir = git.git_dir(store.worktree)
    if index_lock.left_by_the_dead(gitdir):  # a killed statedir's git left it: every git would fail on it
        index_lock.wait_to_release(gitdir, git.LOCK_RETRY_SECONDS)
    entry = recorded(store)
    if entry is None:
        return
    head = git.head(store.worktree)
    if entry["phase"] == "pushing" and head == entry["replayed"]:
        clear(store)  # the replay was whole: the next sync pushes it
        return
    index = (_folder(store) / SAVED_INDEX).read_bytes() if entry["index"] else None
    point = sync_start.SyncStart(entry["head"], index, frozenset(entry["missing"]))
    _keep_foreign(store, point.head, head)
    try:
        sync_start.restore(store, point)
    except (GitError, OSError) as exc:
        reason = exc.message if isinstance(exc, GitError) else str(exc)
        raise GitError(f"a sync died and cannot be put back ({reason}); its record {_folder(store) / JOURNAL} "
                       "is kept, fix the cause and run any statedir command") from None
    if entry["kept"]:  # the originals are the branch again
        git.run(store.worktree, "update-ref", "-d", entry["kept"], check=False)
    clear(store)


def _keep_foreign(store: Disk, start: str | None, head: str | None) -> None:
    """Before the branch goes back to `start`: where it holds a commit that no sync of statedir's
    made (none carries a Statedir-Action trailer) and no remote has, keep it under a ref."""
    if head is None or head == start:
        return
    actions = git.run(store.worktree, "log", "--format=%x1e%(trailers:key=Statedir-Action,valueonly)", head,
                      "--not", *([start] if start else []), "--remotes", "--").stdout.decode(errors="replace")
    if any(not part.strip() for part in actions.split("\x1e")[1:]):
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"{time.time_ns() % 10**9:09d}Z"
        git.run(store.worktree, "update-ref", "-m", "statedir: a dead sync undone", f"{UNDONE}{stamp}", head, "")

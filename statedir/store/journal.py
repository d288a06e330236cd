"""The transaction journal: what a transition is about to change, saved before it changes it.

Written before the first file is touched, it holds each touched file's bytes as they were (a log
appended to: its length), HEAD and the commit message. The next command finishes a transition
that died: where its commit landed the files stay, and the user's index is brought to HEAD for
them; where it did not, every touched file is put back from what was saved. Nothing is ever
inferred from a git command failing, and the journal goes only once recovery has succeeded.
"""
from __future__ import annotations

import binascii
import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from statedir import fault_injection
from statedir.errors import CorruptStore, GitError, UncommittedEdit, WriteFailed
from statedir.gitops import git, index_lock, object_ids
from statedir.store import last_commit
from statedir.store.layout import JOURNAL

if TYPE_CHECKING:
    from statedir.store.disk import Disk


class Before:
    """The touched files as they were: whole files' bytes (None: absent) and logs' lengths."""

    def __init__(self, files: dict[str, bytes | None] | None = None, logs: dict[str, int | None] | None = None) -> None:
        self.files: dict[str, bytes | None] = {} if files is None else files
        self.logs: dict[str, int | None] = {} if logs is None else logs

    def __eq__(self, other: object) -> bool:
        return vars(self) == vars(other) if other.__class__ is Before else NotImplemented

    def __repr__(self) -> str:
        return f"Before(files={self.files!r}, logs={self.logs!r})"

    def rels(self) -> list[str]:
        return sorted({*self.files, *self.logs})


def before(store: Disk, rewritten: Iterable[str], appended: Iterable[str]) -> Before:
    """Read what a transition is about to change: files it rewrites or removes, logs it appends to
    (their length only: a log is never read)."""
    saved = Before()
    for rel in rewritten:
        saved.files[rel] = store.read_bytes(rel)
    for rel in appended:
        if rel not in saved.files:
            try:
                saved.logs[rel] = store.path(rel).stat().st_size
            except FileNotFoundError:
                saved.logs[rel] = None
    return saved




def require_committed(store: Disk, saved: Before, head: str | None) -> None:
    """Refuse a transition whose files differ from HEAD: it would commit an edit it did not make.
    Files statedir itself committed at HEAD are checked against that record; others ask git."""
    known = last_commit.recall(store, head)
    width = len(head) if head else 40  # SHA-1 or SHA-256: object ids are as long as the commit's
    unsure = [rel for rel in saved.rels() if not _matches(saved, rel, known.get(store.git_path(rel), False), width)]
    if not unsure:
        return
    paths = [store.git_path(r) for r in unsure]  # asked of git, or of libgit2 where the caller holds it
    at_head = store.objects.blob_ids(head, paths) if store.objects else git.blob_ids(store.worktree, head, paths)
    for rel in unsure:
        path = store.git_path(rel)
        blob = at_head[path]
        if not _matches(saved, rel, None if blob is None else list(blob), width):
            raise UncommittedEdit(
                f"{path} differs from the last commit (an edit not made by statedir); a transition "
                f"commits only what it writes itself. Keep the edit: `git add -- {path} && git commit`; "
                f"or discard it: `git checkout HEAD -- {path}`" + (" (or delete it, if HEAD lacks it)"
                                                                   if blob is None else ""), file=path)


def _matches(saved: Before, rel: str, blob: Any, width: int) -> bool:
    """Whether the saved file agrees with `blob` ([id or None, size], None: absent, False: unknown)."""
    if blob is False:
        return False
    if rel in saved.files:
        data = saved.files[rel]
        if blob is None or data is None:
            return blob is None and data is None
        return blob[0] is not None and object_ids.blob_id(data, width) == blob[0]
    size = saved.logs[rel]
    return size is None if blob is None else size == blob[1]


def committed_paths(store: Disk, saved: Before, writes: Mapping[str, bytes], removes: Iterable[str],
                    width: int = 40) -> dict[str, Any]:
    """What a commit of this transition holds at each touched path, for `committed.remember`."""
    out: dict[str, Any] = {}
    for rel in saved.logs:
        out[store.git_path(rel)] = [None, store.path(rel).stat().st_size]
    for rel, data in writes.items():
        out[store.git_path(rel)] = [object_ids.blob_id(data, width), len(data)]
    for rel in removes:
        out[store.git_path(rel)] = None
    return out


def begin(store: Disk, saved: Before, head: str | None, message: str) -> None:
    """Save the journal (atomically, synced) before the first file is touched."""
    record = {"head": head, "message": message, "index": git.index_identity(store.worktree),
              "files": {rel: None if data is None else binascii.b2a_base64(data, newline=False).decode()  # b64encode
                        for rel, data in saved.files.items()},
              "logs": saved.logs}
    store.write_atomic(JOURNAL, json.dumps(record).encode())


def end(store: Disk) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(store.root / JOURNAL)


def _read(store: Disk) -> dict[str, Any] | None:
    raw = store.read_bytes(JOURNAL)
    if raw is None:
        return None
    try:
        record = json.loads(raw)
        files = {rel: None if b64 is None else binascii.a2b_base64(b64, strict_mode=True)  # b64decode(validate=True)
                 for rel, b64 in record["files"].items()}
        logs = {rel: None if size is None else int(size) for rel, size in record["logs"].items()}
        head, message, index = record["head"], record["message"], record.get("index")
        if not (head is None or isinstance(head, str)) or not isinstance(message, str):
            raise TypeError
    except (ValueError, TypeError, KeyError, AttributeError):
        raise CorruptStore(f"the transaction journal {store.root / JOURNAL} cannot be read (edited by hand?); "
                           "put the store back with `git checkout HEAD -- <store>` and delete the journal",
                           file=JOURNAL) from None
    for rel in [*files, *logs]:
        if rel.startswith("/") or ".." in rel.split("/"):
            raise CorruptStore(f"the transaction journal names {rel!r}, which is outside the store", file=JOURNAL)
    return {"head": head, "message": message, "index": index, "saved": Before(files, logs)}


def recover(store: Disk) -> None:
    """Finish or undo a transition that died; a no-op where none did. Raises (keeping the
    journal) when it cannot complete, with what to do."""
    record = _read(store)
    if record is None:
        return
    saved: Before = record["saved"]
    paths = [store.git_path(rel) for rel in saved.rels()]
    index_lock.settle(store.worktree)  # a git the dead writer started may still be finishing its commit
    try:
        if not git.landed(store.worktree, record["head"], record["message"]):
            fault_injection.point("during_recovery")
            _put_back(store, saved)
        if git.index_identity(store.worktree) != record["index"]:  # the index may be ahead of HEAD, or behind
            git.reset_index(store.worktree, paths)
    except OSError as exc:
        raise WriteFailed(f"cannot roll back an interrupted transition: {exc.strerror or exc}; the journal "
                          f"{store.root / JOURNAL} is kept, fix the cause and run any statedir command") from None
    except GitError as exc:
        raise GitError(f"cannot finish an interrupted transition: {exc.message}; the journal is kept, "
                       "fix the cause and run any statedir command", **exc.details) from None
    end(store)


def _put_back(store: Disk, saved: Before) -> None:
    for rel, data in saved.files.items():
        if data is None:
            store.remove(rel)
        else:
            store.write_atomic(rel, data)
    for rel, size in saved.logs.items():
        if size is None:
            store.remove(rel)
            continue
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(store.path(rel), os.O_WRONLY | os.O_NOFOLLOW)
            try:
                os.ftruncate(fd, size)
                os.fsync(fd)
            finally:
                os.close(fd)
    for rel in saved.rels():  # directories the transition created, now empty
        store.prune(rel)

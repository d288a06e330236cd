"""The one write path's lower half: files written atomically, logs appended, one commit.

Every subsystem (runs, the handoff bus, the research ledger, rollback) decides what to write
and then calls `persist` while holding the store lock; this is the only code that writes
store files and commits them.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from statedir import fault_injection
from statedir.errors import InvalidValue, WriteFailed
from statedir.files.yaml import MAX_BYTES
from statedir.gitops import git, identity, store_commit
from statedir.hints import opt
from statedir.store import commit_keys, journal, last_commit, people
from statedir.store.store import Store


def persist(store: Store, *, writes: Mapping[str, bytes], appends: Iterable[tuple[str, str, str]] = (),
            removes: Iterable[str] = (), message: str, author: str, signing_key: str | None = None,
            absent: Iterable[str] = ()) -> str:
    """Write `writes` (store-relative path -> bytes) atomically, append each `(path, text, header)`
    to its log, delete `removes`, and commit exactly those paths; returns the commit.

    The caller holds the store lock. Refused before anything is written: a file larger than any
    reader accepts, a repository in the middle of a merge or rebase (or named by a git variable
    that points elsewhere), a touched file that differs from HEAD, an author bound to a signing
    key (signers.yaml) with no key of its at hand, a person (Statedir-Person) who does not hold
    the role as of HEAD. `signing_key` signs the commit whatever its
    author (a change to signers.yaml: its caller checks the key). `absent`: paths the caller knows
    the commit leaves without a file (a new run's stages with nothing to say), remembered so
    that the write that first makes one asks git nothing. Any later failure puts every
    touched file back as it was (from the journal), then surfaces (an OSError as IO_ERROR).
    """
    identity.check_name(author, "actor")
    appends = list(appends)
    removes = list(removes)
    message += "".join(f"{key}: {value}\n" for key, value in store.trailers.items())  # in the trailer block
    for rel, data in writes.items():
        if len(data) > MAX_BYTES:
            raise InvalidValue(f"{rel} would be {len(data)} bytes, more than the {MAX_BYTES} any reader "
                               f"accepts; store large content in a file and register it with {opt('files')}", file=rel)
    store.warnings.extend(git.preflight(store.worktree))
    head = git.head(store.worktree)
    people.require(store, message, author, head)  # a person named holds the role as of the parent
    signing_key = signing_key or commit_keys.key_for(store, author, head)
    saved = journal.before(store, [*writes, *removes], [rel for rel, _, _ in appends])
    journal.require_committed(store, saved, head)
    try:
        journal.begin(store, saved, head, message)
        fault_injection.point("before_write")
        for i, (rel, data) in enumerate(writes.items()):
            store.write_atomic(rel, data)
            if i == 0:
                fault_injection.point("between_files")
        for rel, entry_text, header in appends:
            store.append(rel, entry_text, header)
        for rel in removes:
            store.remove(rel)
            store.prune(rel)
        fault_injection.point("after_write")
        sha = store_commit.commit(store.worktree, [store.git_path(rel) for rel in saved.rels()], message,
                               author=author, signing_key=signing_key, objects=store.objects)
    except OSError as exc:
        journal.recover(store)
        raise WriteFailed(f"writing the store failed: {exc.strerror or exc}; nothing was changed") from None
    except BaseException:
        journal.recover(store)  # put back whatever stopped the transition left, then let it surface
        raise
    fault_injection.point("after_commit")
    journal.end(store)
    store.commits += 1  # the lock's release looks at the object database (gitops.maintenance)
    paths = journal.committed_paths(store, saved, writes, removes, len(sha))
    paths.update({store.git_path(rel): None for rel in absent if not store.path(rel).exists()})
    last_commit.remember(store, head, sha, paths)
    return sha

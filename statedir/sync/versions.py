"""The part of a merge git cannot do: versions registered on both sides.

git merges one file at a time, so two machines' passports of one label conflict. Where every
conflict git left is in the state, stages or passports of runs whose versions
statedir.merge.versions numbers apart, sync writes those runs' folders as that merge gives
them (what verify expects of the merge commit) and the merge goes on; otherwise nothing is
touched and sync refuses as before.
"""
from __future__ import annotations

from statedir.gitops import git, objects
from statedir.history.merge_check import versioned
from statedir.history.snapshot import CommitReader
from statedir.merge.expected import VERSIONED
from statedir.store.store import Store


def _unmerged(store: Store) -> set[str]:
    """Store-relative paths git left conflicted (a path outside the store as '/' + its path)."""
    out = git.run(store.worktree, "ls-files", "-u", "-z", "--full-name", ":/").stdout.decode("utf-8", "surrogateescape")
    prefix = "" if store.prefix == "." else store.prefix + "/"
    paths = {entry.split("\t", 1)[1] for entry in out.split("\0") if "\t" in entry}
    return {p[len(prefix):] if p.startswith(prefix) else "/" + p for p in paths}


def settle(store: Store, ours: str | None, theirs: str) -> bool:
    """Finish a conflicted merge whose every conflict is a version registered on both sides
    (True: the index holds the merge, nothing conflicted); False leaves everything as it was."""
    if ours is None or not (git.git_dir(store.worktree) / "MERGE_HEAD").exists():
        return False
    conflicted = _unmerged(store)
    if not conflicted or any(not VERSIONED.match(rel) for rel in conflicted):
        return False
    runs = {m["run"] for rel in conflicted if (m := VERSIONED.match(rel))}
    proc = git.run(store.worktree, "merge-base", ours, theirs, check=False)
    base = proc.stdout.decode().split()[0] if proc.returncode == 0 and proc.stdout.strip() else None
    writes: dict[str, bytes] = {}
    removes: set[str] = set()
    with objects.ObjectReader(store.worktree) as objs:
        reader = CommitReader(store, objs)
        for run in sorted(runs):
            merged = versioned(reader, (base, ours, theirs), run)
            if merged is None or not all(outcome.clean for outcome in merged.values()):
                return False
            writes.update({rel: outcome.data for rel, outcome in merged.items()})
            listed = set(reader.files(ours, f"runs/{run}")) | set(reader.files(theirs, f"runs/{run}"))
            removes |= {rel for rel in listed - merged.keys() if VERSIONED.match(rel)}  # a label moved away
    for rel, data in writes.items():
        store.write_atomic(rel, data)
    for rel in removes:
        store.remove(rel)
    git.update_index(store.worktree, [store.git_path(rel) for rel in [*writes, *removes]])
    return not _unmerged(store)

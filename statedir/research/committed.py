"""The research files as a commit holds them, read from git's object store: what the index
claims to reflect is a commit, so it is built from that commit's blobs, never from the work
tree (which a `git reset --soft`, a checkout in progress or a hand edit can put anywhere)."""
from __future__ import annotations

from collections.abc import Iterator

from statedir.gitops import git
from statedir.gitops.objects import ObjectReader
from statedir.research.kinds import ROOT
from statedir.store.store import Store

REGULAR = ("100644", "100755")  # a committed symlink (120000) or submodule is no record
BATCH = 256  # object names per round trip: they must fit git's pipe while it answers


def _rel(store: Store, path: str) -> str | None:
    prefix = "" if store.prefix == "." else store.prefix + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def listing(store: Store, commit: str | None) -> dict[str, str | None]:
    """Every research file of `commit`: store-relative path -> blob id ({} without a commit)."""
    if commit is None:
        return {}
    out = git.run(store.worktree, "ls-tree", "-r", "-z", "--full-tree", commit, "--",
                  store.git_path(ROOT)).stdout.decode("utf-8", "surrogateescape")
    found: dict[str, str | None] = {}
    for record in filter(None, out.split("\0")):
        meta, _, path = record.partition("\t")
        mode, _, oid = meta.split(" ")
        rel = _rel(store, path)
        if mode in REGULAR and rel is not None:
            found[rel] = oid
    return found


def changed(store: Store, old: str, new: str | None) -> dict[str, str | None] | None:
    """The research files that differ between two commits: path -> its blob id in `new` (None:
    gone, or no longer a regular file); None where `old` is no commit any more (history rewritten)."""
    if old == new:
        return {}
    if new is None:
        return None
    proc = git.run(store.worktree, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", old, new, "--",
                   store.git_path(ROOT), check=False)
    if proc.returncode != 0:
        return None
    tokens = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, str | None] = {}
    for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
        parts = meta.split()
        rel = _rel(store, path)
        if len(parts) == 5 and rel is not None:
            found[rel] = parts[3] if parts[1] in REGULAR else None
    return found


def blobs(store: Store, oids: dict[str, str]) -> Iterator[tuple[str, bytes]]:
    """(path, content) of each path's blob, in one `git cat-file --batch`."""
    items = sorted(oids.items())
    with ObjectReader(store.worktree) as objects:
        for start in range(0, len(items), BATCH):
            chunk = items[start:start + BATCH]
            for (rel, _), found in zip(chunk, objects.read_many([oid for _, oid in chunk]), strict=True):
                if found is not None and found[1] == "blob":
                    yield rel, found[2]

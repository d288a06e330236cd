"""What a run's commits changed under its folder, read from the run's own trees (issue 37): the
lines `git log --raw --no-renames -- PATH` prints for them, without git diffing the trees above
the folder (`git log --raw -- state/runs/r1` reads the whole `runs/` tree, 10,000 entries in a
store of 10,000 runs, of each commit and its parent; so does each path looked up through it).

The folder's tree at each commit and at its parent is asked of git once (`COMMIT:PATH`, through
the reader's `git cat-file --batch`) and remembered in a disposable file per path under
`.git/statedir/trees/`, rebuilt when absent: a commit's id names its trees for good, so the
answer never goes stale (a repository read through replace refs, which can stand another object
in for one, is never remembered, see statedir.history.path_index). The two trees are then
compared in Python, entry by entry and only where their ids differ, as git's diff does: a file
in one only is added or deleted, a file in both with another blob or mode is modified (a change
of kind, file to symlink, is `T`), a file that became a folder is the file deleted and the
folder's files added. A merge shows no change (as `git log` without `-m`), a root commit its
files added. The trees found are handed to the commit reader, so the replay that follows reads
the run's files by them (statedir.history.snapshot.CommitReader.spec).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from statedir.gitops.objects import ObjectReader, entries
from statedir.history import path_index
from statedir.store.store import Store

FORMAT = 1
BATCH = 100  # names asked of `git cat-file --batch` at once: their line must fit git's pipe
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_PLAIN = re.compile(r"^[^*?[\\:!\n]+$")  # a path, not a pathspec with magic or glob characters

Change = tuple[str, str, str, str, str, str]  # (path, old mode, new mode, old id, new id, status)


def changes(store: Store, objs: ObjectReader, path: str, commits: list[tuple[str, list[str]]]
            ) -> tuple[dict[str, list[Change]], dict[str, str | None]] | None:
    """For each of `commits` (id, parent ids): the blobs it changed under the folder `path`
    (repository-relative), in git's order; and the folder's tree id at each commit and parent
    (None where absent). None where `path` is not a plain folder path, or names a file or
    anything but a folder at one of them (the caller asks git's diff then)."""
    if not _PLAIN.match(path) or path.startswith(("/", "-")) or path.endswith("/"):
        return None
    wanted = list(dict.fromkeys([*(sha for sha, _ in commits),
                                 *(parents[0] for _, parents in commits if len(parents) == 1)]))
    remembered = path_index.plain_ancestry(store)
    file = store.cache_dir / "trees" / f"{hashlib.sha256(path.encode()).hexdigest()[:40]}.json"
    known = _load(file, path) if remembered else {}
    trees: dict[str, str | None] = {sha: known[sha] for sha in wanted if sha in known}
    contents: dict[str, dict[str, tuple[str, str]]] = {}
    missing = [sha for sha in wanted if sha not in trees]
    for start in range(0, len(missing), BATCH):
        batch = missing[start:start + BATCH]
        for sha, found in zip(batch, objs.read_many([f"{sha}:{path}" for sha in batch]), strict=True):
            if found is not None and found[1] != "tree":
                return None
            trees[sha] = found[0] if found else None
            if found:
                contents[found[0]] = entries(found)
    if remembered and missing:
        _save(file, path, {**known, **{sha: trees[sha] for sha in missing}})
    width = len(commits[0][0]) if commits else 40
    differ = _Differ(objs, contents, width)
    out: dict[str, list[Change]] = {}
    for sha, parents in commits:
        if len(parents) > 1:
            out[sha] = []
            continue
        before = trees[parents[0]] if parents else None
        found: list[Change] = []
        differ.diff(path, before, trees[sha], found)
        out[sha] = sorted(found, key=lambda change: change[0].encode("utf-8", "surrogateescape"))
    return out, trees


class _Differ:
    """Compares two trees as `git diff-tree -r` does, reading each tree object once."""

    def __init__(self, objs: ObjectReader, contents: dict[str, dict[str, tuple[str, str]]], width: int) -> None:
        self.objs = objs
        self.contents = contents
        self.zero = "0" * width

    def tree(self, oid: str | None) -> dict[str, tuple[str, str]]:
        if oid is None:
            return {}
        if oid not in self.contents:
            self.contents[oid] = self.objs.tree(oid)
        return self.contents[oid]

    def diff(self, base: str, old: str | None, new: str | None, out: list[Change]) -> None:
        if old == new:
            return
        a, b = self.tree(old), self.tree(new)
        for name in {**a, **b}:
            before, after = a.get(name), b.get(name)
            if before == after:
                continue
            path = f"{base}/{name}"
            old_tree = before is not None and _is_tree(before[0])
            new_tree = after is not None and _is_tree(after[0])
            if old_tree or new_tree:  # a folder on either side: its files, and a file replaced by it
                self.diff(path, before[1] if old_tree else None, after[1] if new_tree else None,  # type: ignore[index]
                          out)
                before = None if old_tree else before
                after = None if new_tree else after
                if before is None and after is None:
                    continue
            if before is None:
                out.append((path, "000000", after[0], self.zero, after[1], "A"))  # type: ignore[index]
            elif after is None:
                out.append((path, before[0], "000000", before[1], self.zero, "D"))
            else:
                kind = "M" if int(before[0], 8) & 0o170000 == int(after[0], 8) & 0o170000 else "T"
                out.append((path, before[0], after[0], before[1], after[1], kind))


def _is_tree(mode: str) -> bool:
    return int(mode, 8) & 0o170000 == 0o040000


def _load(file: Path, path: str) -> dict[str, str | None]:
    try:
        saved = json.loads(file.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("path") != path:
        return {}
    trees = saved.get("trees")
    if not isinstance(trees, dict):
        return {}
    return {sha: oid for sha, oid in trees.items()
            if _SHA.match(sha) and (oid is None or (isinstance(oid, str) and _SHA.match(oid)))}


def _save(file: Path, path: str, trees: dict[str, Any]) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        part = file.with_name(f"{file.name}.{os.getpid()}-{threading.get_ident()}.tmp")
        part.write_text(json.dumps({"format": FORMAT, "path": path, "trees": trees}))
        os.replace(part, file)
    except OSError:
        pass  # a cache: a read-only git directory only costs the next read the lookups

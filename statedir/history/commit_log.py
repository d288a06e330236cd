"""The commits verify reads: their trailers and the store files each changed, from one `git log`
(`--raw` for the whole store or a span; for a run's remembered commits, statedir.history.path_index,
the changes are read from the run's own trees, statedir.history.path_trees)."""
from __future__ import annotations

import json
from typing import Any

from statedir.errors import GitError
from statedir.gitops import commit_message, git, identity
from statedir.history import path_index, path_trees
from statedir.history.snapshot import CommitReader
from statedir.store.recorded import Commit
from statedir.store.store import Store

_FIELDS = ("%H", "%P", "%(trailers:key=Statedir-Run,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Actor,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Action,valueonly,separator=%x2C)",
           f"%(trailers:key={commit_message.REQUEST_TRAILER},valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Repairs-Merge,valueonly,separator=%x2C)",
           *(f"%(trailers:key={trailer},valueonly,separator=%x2C)" for trailer in identity.TRAILERS.values()))

def commits(store: Store, pathspec: str, since: str | None, *, reader: CommitReader | None = None,
            newest: int | None = None) -> list[Commit]:
    """The commits touching `pathspec`, oldest first, with their store files' changes; `newest`
    (no `since`; a run's or a file's): only the newest that many as `git log -- PATHSPEC` lists
    them. With `reader`, a run's commits have their changes read from the run's trees
    (statedir.history.path_trees), which the reader then reads the run's files by."""
    if not git.head(store.worktree):
        return []
    fields = ["--no-renames", "--no-abbrev", "-z", "--format=%x1e" + "%x1f".join(_FIELDS)]
    if since or pathspec == store.git_path("."):  # the whole store: remembered by verified_cache instead
        span = [f"{since}..HEAD"] if since else []
        raw = git.run(store.worktree, "log", "--reverse", "--topo-order", "--raw", *fields, *span, "--",
                      pathspec).stdout
        return _parsed(store, raw)
    # a run's (a file's) commits as remembered (statedir.history.path_index): only those are read
    listed = path_index.commits(store, pathspec, order="topo")[::-1]
    if newest is not None:  # the newest as the log shows them (date order), replayed parents first all the same
        shown = set(path_index.commits(store, pathspec)[:max(newest, 0)])
        listed = [sha for sha in listed if sha in shown]
    if reader is not None and pathspec.startswith(store.git_path("runs") + "/"):
        # No pathspec: git would diff each commit against its parents under it only to keep the
        # listed commits it keeps anyway (through every `runs/` entry: most of a read at 10,000 runs).
        found = _parsed(store, path_index.records(store, listed, *fields))
        diffs = path_trees.changes(store, reader.objects, pathspec, [(c.sha, c.parents) for c in found])
        if diffs is not None:
            prefix = "" if store.prefix == "." else store.prefix + "/"
            reader.know_trees(pathspec[len(prefix):], diffs[1])
            for commit in found:
                for path, _, mode, old, new, status in diffs[0][commit.sha]:
                    commit.changed[path[len(prefix):]] = (status, old, new)
                    commit.modes[path[len(prefix):]] = mode
            return found
    return _parsed(store, path_index.records(store, listed, "--raw", *fields, "--", pathspec))


def _parsed(store: Store, raw: bytes) -> list[Commit]:
    """The commits of verify's `git log` output, with the changes its `--raw` printed (if any)."""
    out = raw.decode("utf-8", "surrogateescape")
    prefix = "" if store.prefix == "." else store.prefix + "/"
    found = []
    for record in out.split("\x1e")[1:]:
        header, _, raw = record.partition("\0")
        fields = header.split("\x1f")
        if len(fields) != len(_FIELDS):
            raise GitError(f"git log printed a record verify cannot read: {header[:80]!r}")
        sha, parents, run_id, actor, action, request, repairs, *named = (f.strip() for f in fields)
        who = {key: value for key, value in zip(identity.TRAILERS, named, strict=True) if value}
        commit = Commit(sha, parents.split(), run_id, actor, action, _json(request), repairs=repairs or None, who=who)
        tokens = raw.lstrip("\n").split("\0")
        for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
            parts = meta.split()
            if len(parts) == 5 and path.startswith(prefix):
                commit.changed[path[len(prefix):]] = (parts[4][0], parts[2], parts[3])
                commit.modes[path[len(prefix):]] = parts[1]
        found.append(commit)
    return found


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None



"""The commits that touched one path (a run's folder), newest first, remembered so that `log RUN`,
the web history page, `verify RUN` and `versions` do not walk the whole history each time (issue
37): a disposable file per path and order under `.git/statedir/`, rebuilt when absent.

History stays the one source of truth. A file holds the commit it was read at (its tip) and the
list `git log --format=%H TIP -- PATH` printed there (or with `--topo-order`, or
`--full-history`). A later read at HEAD takes it only where HEAD is the tip, or descends from it
by a line of commits with one parent each (git is asked for that line and what each of its
commits changed under PATH: a cost of the commits since, not of the history); a commit's history
never changes (its id names it), so the listing up to the tip still holds, and on a line of
single-parent commits git's walk from HEAD prints the line's commits that touched PATH, then
exactly the walk from the tip. A merge PATH is the same in as in one of its parents is on that
line as git's log follows it, along that parent (not with `--full-history`). Anything else (no
file, a file this version did not write, another merge since, a rewritten or reset branch, a
tip git no longer has) walks the whole history again, as git itself would, and remembers that.
A repository whose history git reads through grafts, replace refs or a shallow boundary is
always walked (those change a commit's ancestry without changing its id). The file is local to
this clone (never pushed or fetched); reading writes it atomically (no lock needed: its content
is a function of the tip and the path).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from typing import Any

from statedir.gitops import git
from statedir.store.store import Store

FORMAT = 1
# git log's default order, --topo-order, and --full-history (every commit that changed the path, merges' sides
# included: `versions`)
ORDERS = {"date": (), "topo": ("--topo-order",), "full": ("--full-history",)}
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def commits(store: Store, spec: str, *, order: str = "date", start: str | None = None) -> list[str]:
    """What `git log [--topo-order] --format=%H START -- SPEC` prints (START: default HEAD), as a
    list; read from the remembered listing where it still holds, from a whole walk otherwise."""
    head = git.head(store.worktree)
    at = start or head
    if at is None:
        return []
    usable = at == head and plain_ancestry(store)
    file = store.cache_dir / "paths" / f"{order}-{hashlib.sha256(spec.encode()).hexdigest()[:40]}.json"
    if usable:
        saved = _load(file, spec, order)
        if saved is not None:
            tip, listed = saved
            if tip == at:
                return listed
            newer = _since(store, tip, at, spec, order)
            if newer is not None:
                listed = newer + listed
                _save(file, spec, order, at, listed)
                return listed
    listed = git.run(store.worktree, "log", *ORDERS[order], "--format=%H", at, "--", spec).stdout.decode().split()
    if usable:
        _save(file, spec, order, at, listed)
    return listed


def _since(store: Store, tip: str, head: str, spec: str, order: str = "date") -> list[str] | None:
    """The commits after `tip` up to `head` that touched `spec`, newest first, where `head`
    descends from `tip` by single-parent commits only (as git's log of `order` follows them: a
    merge the path is the same in as in one parent is followed along that one, but with
    `--full-history`); None otherwise."""
    proc = git.run(store.worktree, "log", *ORDERS[order], "--sparse", "--no-renames", "--name-only", "-z",
                   "--format=%x1e%H %P", f"{tip}..{head}", "--", spec, check=False)
    if proc.returncode != 0:
        return None
    expect, touched = head, []
    for record in proc.stdout.decode(errors="replace").split("\x1e")[1:]:
        line, _, names = record.partition("\0")
        sha, *parents = line.split()
        if sha != expect or len(parents) != 1:
            return None
        if names.strip("\0\n"):
            touched.append(sha)
        expect = parents[0]
    return touched if expect == tip else None


def plain_ancestry(store: Store) -> bool:
    """No grafts, replace refs or shallow boundary (read from the git directory, no process)."""
    common = git.common_dir(git.git_dir(store.worktree))
    if (common / "shallow").exists() or (common / "info" / "grafts").exists() or os.environ.get("GIT_GRAFT_FILE"):
        return False
    replace = common / "refs" / "replace"
    if replace.is_dir() and any(replace.iterdir()):
        return False
    try:
        with open(common / "packed-refs", "rb") as packed:
            return not any(b" refs/replace/" in line for line in packed)
    except OSError:
        return True


def _load(file: Any, spec: str, order: str) -> tuple[str, list[str]] | None:
    try:
        saved = json.loads(file.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("spec") != spec \
            or saved.get("order") != order:
        return None
    tip, listed = saved.get("tip"), saved.get("commits")
    if not isinstance(tip, str) or not _SHA.match(tip) or not isinstance(listed, list) \
            or not all(isinstance(c, str) and _SHA.match(c) for c in listed):
        return None
    return tip, listed


def _save(file: Any, spec: str, order: str, tip: str, listed: list[str]) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        part = file.with_name(f"{file.name}.{os.getpid()}-{threading.get_ident()}.tmp")
        part.write_text(json.dumps({"format": FORMAT, "spec": spec, "order": order, "tip": tip, "commits": listed}))
        os.replace(part, file)
    except OSError:
        pass  # a cache: a read-only git directory only costs the next read a walk


def records(store: Store, listed: list[str], *args: str, env: dict[str, str] | None = None) -> bytes:
    """`git log --no-walk=unsorted ARGS` over the commits `listed`, in that order (one process,
    reading only those commits; none where the list is empty)."""
    if not listed:
        return b""
    stdin = "".join(f"{sha}\n" for sha in listed).encode()
    return git.run(store.worktree, "log", "--no-walk=unsorted", "--stdin", *args, env=env,
                   stdin=stdin).stdout

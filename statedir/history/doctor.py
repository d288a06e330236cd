"""doctor: what a crash, a clone or a hand edit left behind, reported one line each with what
`--fix` does, and repaired with `--fix` (store files only through the one write path)."""
from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import functools
import itertools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.errors import StatedirError
from statedir.files import schema
from statedir.files.parse_cache import ParseCache
from statedir.gitops import commit_message, git, git_owner, index_lock, maintenance
from statedir.history import duplicate_sources, merge_repair, migrate
from statedir.history.stored_files import parse
from statedir.merge import checks
from statedir.store import branch_checks, layout, sync_journal
from statedir.store.layout import JOURNAL
from statedir.store.store import Store
from statedir.store.write import persist

Finding = dict[str, Any]


def _finding(kind: str, file: str | None, message: str, fix: str, repair: Callable[[], None] | None) -> Finding:
    return {"kind": kind, "file": file, "message": message, "fix": fix, "_repair": repair}


def lock_held(store: Store) -> bool:
    """Whether a live process holds the store lock now (flock dies with its holder)."""
    path = store.root / layout.LOCK
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)  # closing releases a lock taken just now
    return False


def leftovers(store: Store, timeout: float | None) -> list[Finding]:
    """A transition's journal or temp files left by a process that died."""
    out = []
    if (store.root / JOURNAL).exists() and not lock_held(store):
        def recover() -> None:
            with store.locked(timeout):  # taking the lock rolls the half transition back
                pass
        out.append(_finding("journal", JOURNAL, "a transition died before its commit and left its journal",
                            "roll its files back to HEAD and remove the journal", recover))
    if sync_journal.dead_sync(store) and not lock_held(store):
        def undo_sync() -> None:
            with store.locked(timeout):  # taking the lock finishes or puts back the dead sync
                pass
        out.append(_finding("sync_journal", f".git/statedir/{sync_journal.JOURNAL}",
                            "a sync died before it finished and left its record",
                            "finish a replay that was pushing, else put the branch, index and work tree back where "
                            "the sync started (the originals on the branch again)", undo_sync))
    for directory, _, names in os.walk(store.root):
        for name in names:
            if name.endswith(".tmp") and name.startswith("."):
                path = Path(directory) / name
                rel = path.relative_to(store.root).as_posix()
                out.append(_finding("temp_file", rel, "a temporary file of an interrupted write",
                                    "delete it", functools.partial(path.unlink, missing_ok=True)))
    return out


def dead_gits(store: Store) -> list[Finding]:
    """git's index lock and the merge driver's temporary files, left by a statedir process (or a
    git it ran) that was killed: every later commit fails on the lock."""
    gitdir = git.git_dir(store.worktree)
    out = []
    if index_lock.left_by_the_dead(gitdir):
        out.append(_finding("index_lock", ".git/index.lock", "git's index lock was left by a statedir process "
                            "that died (or a git it ran): every commit fails on it",
                            "remove it, with the ref locks its git left (once no git runs in the repository)",
                            functools.partial(index_lock.wait_to_release, gitdir, git.LOCK_RETRY_SECONDS)))
    owner = git_owner.dead(gitdir)
    for path in git_owner.leftovers(owner[1], owner[0]) if owner else []:
        out.append(_finding("merge_file", path.name, f"{path.name} is a temporary file of a merge that was killed",
                            "delete it", functools.partial(path.unlink, missing_ok=True)))
    return out


class Backup:
    """Where `--fix` saves the store files it restores: a folder of its own under `root`, named
    by the time and made exclusively on first use (another doctor in the same second gets
    `<time>-2`), so no saved file is ever overwritten."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.folder: Path | None = None

    def _made(self) -> Path:
        if self.folder is None:
            self.root.mkdir(parents=True, exist_ok=True)
            for n in itertools.count(1):
                folder = self.root / (self.stamp if n == 1 else f"{self.stamp}-{n}")
                try:
                    folder.mkdir()  # exclusive: a folder another doctor made is never reused
                except FileExistsError:
                    continue
                self.folder = folder
                break
        assert self.folder is not None
        return self.folder

    def save(self, source: Path, rel: str) -> None:
        """Copy `source` to `rel` in this doctor's folder (`rel.2`, ... if saved before in this run)."""
        target = self._made() / rel
        for n in itertools.count(2):
            if not os.path.lexists(target):
                break
            target = self._made() / f"{rel}.{n}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def uncommitted(store: Store, backup: Backup) -> list[Finding]:
    """Store files that differ from HEAD (or are new) with no transition."""
    out = git.run(store.worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--",
                  store.git_path(".")).stdout.decode("utf-8", "surrogateescape")
    prefix = "" if store.prefix == "." else store.prefix + "/"
    found = []
    entries = out.split("\0")
    for entry in entries:
        if len(entry) < 4 or not entry[3:].startswith(prefix):
            continue
        path = entry[3:]
        rel = path[len(prefix):]
        state = "is not committed" if entry[:2] == "??" else "differs from HEAD"
        if rel in (JOURNAL, layout.LOCK) or rel.endswith(".tmp"):
            continue

        def restore(path: str = path, rel: str = rel) -> None:
            source = store.worktree / path
            if source.is_file():
                backup.save(source, rel)
            if git.blob_ids(store.worktree, git.head(store.worktree), [path])[path] is None:
                (store.worktree / path).unlink(missing_ok=True)  # HEAD has no such file
            else:
                git.run(store.worktree, "--literal-pathspecs", "checkout", "HEAD", "--", path)
        found.append(_finding("uncommitted", rel, f"{rel} {state} with no transition",
                              f"save it to a new folder in {backup.root} and restore HEAD's version", restore))
    return found


def schema_copies(store: Store, actor: str, timeout: float | None) -> list[Finding]:
    """`.schemas/` copies that are missing or differ from the schemas statedir ships."""
    stale = []
    for name in schema.schema_names():
        rel = f".schemas/{schema.schema_path(name).name}"
        want = schema.schema_path(name).read_bytes()
        if store.read_bytes(rel) != want:
            stale.append((rel, want))
    if not stale:
        return []

    def restore() -> None:
        with store.locked(timeout):
            copies = "copy" if len(stale) == 1 else "copies"
            message = commit_message.message(f"doctor: restore {len(stale)} schema {copies}", "-", actor, "doctor")
            persist(store, writes=dict(stale), message=message, author=actor)
    return [_finding("schema_copy", rel, f"{rel} is missing or differs from the schema statedir ships",
                     "write statedir's copy (one commit for all)", restore if i == 0 else None)
            for i, (rel, _) in enumerate(stale)]


def parse_cache(store: Store) -> list[Finding]:
    """Parse-cache entries that are unreadable or disagree with the file they stand for."""
    cache = ParseCache(store.cache_dir / "parsed")  # its own: nothing remembered in memory
    bad: list[str] = []
    for directory, _, names in os.walk(store.root / "runs"):
        for name in names:
            rel = (Path(directory) / name).relative_to(store.root).as_posix()
            kind = layout.schema_for(rel)
            if not kind or kind.startswith("log-"):
                continue
            raw = (Path(directory) / name).read_bytes()
            hit = cache.get(schema.cache_kind(kind), raw)
            if hit is None:
                continue
            with contextlib.suppress(StatedirError):
                if parse(rel, raw)[0] != hit[0]:
                    bad.append(rel)
    for path in (store.cache_dir / "parsed").rglob("*.json") if (store.cache_dir / "parsed").is_dir() else []:
        try:
            entry = json.loads(path.read_bytes())
            ok = isinstance(entry, list) and len(entry) == 3
        except (OSError, ValueError):
            ok = False
        if not ok:
            bad.append(str(path))
    if not bad:
        return []

    def clear() -> None:
        shutil.rmtree(store.cache_dir / "parsed", ignore_errors=True)
    return [_finding("parse_cache", rel, f"the parse cache's entry for {rel} does not match it",
                     "delete the parse cache (it is rebuilt as files are read)", clear if i == 0 else None)
            for i, rel in enumerate(bad)]


def object_database(store: Store) -> list[Finding]:
    """A pile of loose objects, too many packs, or no commit-graph to read history by path
    (statedir's maintenance keeps these in order as it writes: see gitops.maintenance)."""
    head = git.head(store.worktree)
    if head is None:
        return []
    commits = int(git.run(store.worktree, "rev-list", "--count", head).stdout.decode().strip() or 0)
    problems = maintenance.problems(store.worktree, commits)
    return [_finding("object_database", None, problem, "pack the objects and write the commit-graph (git gc, "
                                                       "git commit-graph write --changed-paths)",
                     functools.partial(maintenance.repair, store.worktree) if i == 0 else None)
            for i, problem in enumerate(problems)]


def doctor(store: Store, *, fix: bool = False, actor: str = "state_tracker",
           timeout: float | None = None) -> dict[str, Any]:
    """{findings: [{kind, file, message, fix}], fixed: bool}; with `fix`, each is repaired and
    the store examined again (`findings` then lists what is left)."""
    backup = Backup(git.git_dir(store.worktree) / "statedir" / "doctor")

    def examine() -> list[Finding]:
        found = dead_gits(store) + leftovers(store, timeout)
        if not any(f["kind"] == "journal" for f in found):  # a journal's files are rolled back first
            found += uncommitted(store, backup)
        found += schema_copies(store, actor, timeout) + parse_cache(store) + migrate.findings(store, actor, timeout)
        found += checks.findings(store, actor, timeout)
        found += merge_repair.findings(store, actor, timeout) + duplicate_sources.findings(store, actor)
        found += [_finding(kind, None, message, what, repair)  # a store on a branch of its own
                  for kind, message, what, repair in branch_checks.problems(store.root)]
        return found + object_database(store)

    found = examine()
    repaired: list[Finding] = []
    if fix:
        dead = [finding for finding in found if finding["kind"] in ("index_lock", "merge_file")]
        if dead:  # first, while the dead statedir's record of its gits is there to tell them
            repaired += _repair(dead)
            found = examine()
        with git_owner.running(git.git_dir(store.worktree), store.worktree):  # the gits a repair runs
            for _ in range(2):  # a rolled-back journal can reveal more to repair
                fixable = [finding for finding in found if finding["_repair"] is not None]
                if not fixable:
                    break  # what is left has no automatic repair: it stays a finding, not "fixed"
                repaired += _repair(fixable)
                found = examine()
    return {"findings": [{k: v for k, v in f.items() if k != "_repair"} for f in found],
            "repaired": repaired, "backup": str(backup.folder) if backup.folder else None}


def _repair(findings: list[Finding]) -> list[Finding]:
    """Each finding repaired; what was repaired, as reported."""
    for finding in findings:
        if finding["_repair"] is not None:
            finding["_repair"]()
    return [{k: v for k, v in finding.items() if k != "_repair"} for finding in findings if finding["_repair"]]

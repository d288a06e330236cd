"""A sync where nothing moved, answered with one `git ls-remote` and a few small files read.

A sync that found nothing to exchange (statedir.sync.entry: HEAD is the remote's branch and its
remote-tracking ref, and the commit verified last) leaves a record of what its answer rested on,
`.git/statedir/synced` (statedir.sync.unmoved_record writes it; disposable, local to the clone):
the store, its git directories, the branch, HEAD's commit, the repository's config file and the
store's `.gitattributes` (their SHA-1: the upstream, the remote's URL, the commit verified last and
the merge driver's registration are read from them), the remote and where git reaches it. The next
plain `statedir sync` reads those again (`state`) and, where every one is as recorded, no
transition, sync, merge or git of statedir's is under way and the remote still names HEAD's
commit (`git ls-remote`), answers `up_to_date` as the whole sync would (`answer`); it takes no
lock and writes nothing. Anything else (no record, another statedir, a ref or file moved, config
given through the environment, the remote moved) is None: the whole sync runs, every check as
before.

It reads the repository's files with `os.path` (no pathlib, json or the store: the short
path's start-up is most of its cost), so the few names it shares with the store are written here
too; tests/sync/test_unmoved.py holds them equal to the store's.
"""
from __future__ import annotations

import os
from _sha1 import sha1

from statedir.gitops import process, ref_files
from statedir.gitops.git_options import CONFIG_ENVIRONMENT, IN_PROGRESS, QUIET, REDIRECTS
from statedir.sync.outcome import result

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (nor collections.abc): this path's start-up
if TYPE_CHECKING:  # is most of its cost
    from collections.abc import Mapping
    from typing import Any

RECORD = "synced"  # in .git/statedir/
FORMAT = "statedir-synced 1"  # the next number where what is recorded, or what it means, changes
CONFIG = "statedir.yaml"  # statedir.store.layout.CONFIG
JOURNAL = ".statedir.txn"  # statedir.store.layout.JOURNAL: a transition under way, or one a dead writer left
BUSY = ("statedir/sync.json", "statedir/git.owner", "index.lock")  # in the git directory: a sync, statedir's git,
#   or anyone's git under way (statedir.store.sync_journal.JOURNAL, statedir.gitops.git_owner.NAME)


def _git_dirs(worktree: str) -> tuple[str, str] | None:
    """(the git directory, the common one) of the work tree, where its `.git` says them plainly."""
    dot = os.path.join(worktree, ".git")
    if os.path.isdir(dot):
        gitdir = dot
    else:
        text = (ref_files.small_file(dot) or b"").decode("utf-8", "replace").strip()
        if not text.startswith("gitdir:"):
            return None
        gitdir = os.path.realpath(os.path.join(worktree, text[7:].strip()))
    pointer = ref_files.small_file(os.path.join(gitdir, "commondir"))
    common = os.path.realpath(os.path.join(gitdir, pointer.decode("utf-8", "replace").strip())) if pointer else gitdir
    return gitdir, common


def state(root: str) -> list[str] | None:
    """What a no-op sync's answer rests on in the store at `root` (resolved), as the record's lines; None
    where it cannot be read plainly, or where a transition, a sync or a git is under way or left half done."""
    worktree = root
    while not os.path.exists(os.path.join(worktree, ".git")):  # statedir.gitops.git.find_worktree
        parent = os.path.dirname(worktree)
        if parent == worktree:
            return None
        worktree = parent
    dirs = _git_dirs(worktree)
    if dirs is None:
        return None
    gitdir, common = dirs
    busy = [os.path.join(root, JOURNAL), *(os.path.join(gitdir, name) for name in BUSY),
            *(os.path.join(gitdir, marker) for marker, _ in IN_PROGRESS)]
    if any(os.path.lexists(path) for path in busy):
        return None
    head = (ref_files.small_file(os.path.join(gitdir, "HEAD")) or b"").decode("utf-8", "replace")
    branch = head[16:].rstrip("\n")
    if not head.startswith("ref: refs/heads/") or not branch or not branch.isprintable():
        return None
    commit = ref_files.commit(common, f"refs/heads/{branch}")
    config = ref_files.small_file(os.path.join(common, "config"))
    if commit is None or config is None:
        return None
    attributes = ref_files.small_file(os.path.join(root, ".gitattributes")) or b""
    return [FORMAT, root, worktree, gitdir, common, branch, commit, sha1(config).hexdigest(),
            sha1(attributes).hexdigest()]


def tracked(common: str, name: str, branch: str) -> str | None:
    """The remote-tracking ref's commit (`refs/remotes/NAME/BRANCH`)."""
    return ref_files.commit(common, f"refs/remotes/{name}/{branch}")


def write(lines: list[str]) -> None:
    """The record (the lines of `state`, then the remote, its branch and where git reaches it), replaced whole."""
    path = os.path.join(lines[3], "statedir", RECORD)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def discard(gitdir: str) -> None:
    """No record: the next sync runs whole."""
    try:
        os.unlink(os.path.join(gitdir, "statedir", RECORD))
    except OSError:
        pass


def store_root(given: str | None, cwd: str) -> str | None:
    """The store a plain sync opens, as statedir.store.discovery finds it at or above `cwd` or at `given`
    (STATEDIR_STORE), resolved; None where discovery would look further (a store on a branch of its own)."""
    if given is not None:
        nested = os.path.join(given, "state")
        found = nested if not os.path.isfile(os.path.join(given, CONFIG)) and \
            os.path.isfile(os.path.join(nested, CONFIG)) else given
        return os.path.realpath(os.path.join(cwd, found))
    directory = cwd
    while True:
        for candidate in (os.path.join(directory, "state"), directory):
            if os.path.isfile(os.path.join(candidate, CONFIG)):
                return os.path.realpath(candidate)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def answer(root: str, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The sync's result where nothing moved since the record (`up_to_date`, as statedir.sync.entry
    says it), with one `git ls-remote`; None where anything did or may have: the whole sync decides."""
    if any(name in environ for name in REDIRECTS) or any(environ.get(name) for name in CONFIG_ENVIRONMENT):
        return None  # another repository named, or config that outranks the file: the whole sync reads them
    now = state(root)
    if now is None or not os.path.isfile(os.path.join(root, CONFIG)):
        return None
    record = ref_files.small_file(os.path.join(now[3], "statedir", RECORD)) or b""
    recorded = record.decode("utf-8", "replace").split("\n")
    if len(recorded) != len(now) + 4 or recorded[:len(now)] != now or recorded[-1] != "":
        return None
    name, branch, where = recorded[len(now):-1]
    commit = now[6]
    if tracked(now[4], name, branch) != commit:
        return None
    try:
        proc = process.run(["git", *QUIET, "ls-remote", "--heads", name, f"refs/heads/{branch}"], where,
                           dict(environ), None)
    except (OSError, ValueError):  # no git, no such folder, a NUL in the record's folder: the whole sync decides
        return None
    listed = [line.split("\t") for line in proc.stdout.decode(errors="replace").splitlines()]
    if proc.returncode != 0 or listed != [[commit, f"refs/heads/{branch}"]]:
        return None
    return result(name, branch, "up_to_date", commit, 1, pushed=False)

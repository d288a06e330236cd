"""A commit of exactly the store's changed files, on top of HEAD, with the user's index held.

Small repositories commit with one `git commit --only`; large ones (whose index refresh would
lstat() every tracked file) with plumbing over the trees on the changed paths alone.
"""
from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from statedir.errors import GitError
from statedir.gitops import index_lock, indexfile
from statedir.gitops.git import LOCK_RETRY_SECONDS, QUIET, environment, gist, git_dir, head, run, update_index

if TYPE_CHECKING:
    from statedir.gitops import libgit

_FALLBACK_IDENTITY = {"GIT_COMMITTER_NAME": "statedir", "GIT_COMMITTER_EMAIL": "statedir@localhost"}

# Above this size of the user's index, `git commit` (which lstat()s every tracked file to refresh
# the index) costs more than building the commit with plumbing that touches no work tree.
PLUMBING_INDEX_BYTES = 1 << 20


def commit(worktree: Path, paths: list[str], text: str, *, author: str | None = None,
           plumbing_above: int = PLUMBING_INDEX_BYTES, signing_key: str | None = None,
           objects: libgit.Objects | None = None) -> str:
    """Commit exactly `paths` (worktree-relative, added, changed or deleted) on top of HEAD.

    Nothing the user staged or left unstaged elsewhere is swept in, and afterwards the
    user's index agrees with HEAD for these paths; it is held (git's index.lock) throughout
    and updated before HEAD moves (see gitindex.Index). In a small repository
    `git commit --only` builds the commit (in a temporary index of its own, from HEAD plus
    these paths); in a large one, where that command's index refresh would lstat() every
    tracked file, the commit is built with plumbing from the trees on the changed paths alone.
    With `signing_key` (as git's user.signingKey takes it) git signs the commit (gpg.format=ssh).
    With `objects` (a long-lived caller's in-process object store, see statedir.gitops.libgit) the
    trees and the commit are built in-process, the same way, with no git process at all.
    """
    env = _author(author) if author else {}
    sign: tuple[str, ...] = ()
    if signing_key:
        env.update(_signing(signing_key))
        sign = ("-S",)
    gitdir = git_dir(worktree)
    user_index = gitdir / "index"
    with index_lock.held(gitdir, LOCK_RETRY_SECONDS) as index:
        parent = head(worktree)
        sha: str | None
        large = user_index.is_file() and user_index.stat().st_size > plumbing_above
        blobs = None if large or parent is None else indexfile.update(gitdir, worktree, index.next, paths,
                                                                        len(parent) // 2)
        if blobs is None:
            update_index(worktree, paths, env=index.env)
        index.publish()
        inprocess = objects if objects is not None and objects.usable(parent, sign, paths) else None
        if parent is None or large or inprocess:
            sha = _commit_trees(worktree, paths, text, env, parent, sign, inprocess, blobs)
        else:
            _fault("during_commit")
            for attempt in range(3):
                try:
                    _with_identity(worktree, ("--literal-pathspecs", "commit", "-q", "--no-verify", "--allow-empty",
                                              *sign, "--only", "-F", "-", "--", *paths), {**env, **index.env}, text)
                    break
                except GitError as exc:  # HEAD moved under it (a ref update of the user's): build it again
                    if "cannot lock ref" not in exc.message or attempt == 2:
                        raise
            sha = head(worktree)
            index.publish()  # with the stat data `commit --only` refreshed
        if sha is None or sha == parent:
            raise GitError("git commit did not move HEAD")
    return sha


def _author(actor: str) -> dict[str, str]:
    """git's author for an actor: git refuses some names (only punctuation, angle brackets,
    control characters), so those are cleaned; the trailers keep the actor exactly."""
    name = "".join(c for c in actor if c >= " " and c not in "<>\x7f").strip(" .,:;\"'")
    local = re.sub(r"[^A-Za-z0-9._-]+", "-", actor).strip(".-") or "actor"
    return {"GIT_AUTHOR_NAME": name or "actor", "GIT_AUTHOR_EMAIL": f"{local}@statedir.invalid"}


def _signing(key: str) -> dict[str, str]:
    """The configuration, as environment variables (after any the caller's environment set),
    that makes git sign with an SSH key: gpg.format=ssh, user.signingKey=KEY."""
    import os

    first = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
    pairs = (("gpg.format", "ssh"), ("user.signingKey", key))
    env = {"GIT_CONFIG_COUNT": str(first + len(pairs))}
    for n, (name, value) in enumerate(pairs, first):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = name, value
    return env


def _fault(name: str) -> None:
    from statedir import faults

    faults.point(name)


def _commit_trees(worktree: Path, paths: list[str], text: str, env: dict[str, str], parent: str | None,
                  sign: tuple[str, ...] = (), objects: Objects | None = None,
                  blobs: dict[str, str] | None = None) -> str:
    """A commit that reads no index: the changed files are hashed (unless `blobs` has them
    already), only the trees on their paths are rebuilt from the parent's (one directory
    listing each, never every tracked file), then the commit and a compare-and-swap of HEAD;
    by git's plumbing, or in-process with `objects`."""
    store: Objects = objects or Plumbing(worktree)
    present = [p for p in paths if (worktree / p).is_file()]  # the others are deleted
    if blobs is not None and all(p in blobs for p in present):
        hashed = [blobs[p] for p in present]
    else:
        hashed = store.blobs(present) if present else []
    # directory -> name -> (mode, type, object id); "" is the root
    files: dict[str, dict[str, tuple[str, str, str]]] = {}
    for rel, oid in zip(present, hashed, strict=True):
        executable = (worktree / rel).stat().st_mode & 0o100
        directory, _, name = rel.rpartition("/")
        files.setdefault(directory, {})[name] = ("100755" if executable else "100644", "blob", oid)
    for rel in set(paths) - set(present):
        directory, _, name = rel.rpartition("/")
        files.setdefault(directory, {})[name] = ("", "", "")  # removed
    dirs = {""}
    for directory in files:
        parts = directory.split("/") if directory else []
        dirs.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    ordered = sorted(dirs, key=lambda d: (-d.count("/") - (d != ""), d))  # deepest first, root last
    _fault("during_commit")
    for attempt in range(3):
        trees = store.trees(parent, ordered) if parent else {d: {} for d in ordered}
        with store.tree_writer() as mktree:
            root = _write_trees(ordered, trees, files, mktree)
        # Compare-and-swap: a HEAD that moved meanwhile (the user's own commit) fails the
        # update instead of being lost, and the commit is rebuilt on top of it.
        sha = store.commit(root, parent, text, env, sign, last=attempt == 2)
        if sha is not None:
            return sha
        parent = head(worktree)
    raise GitError("HEAD kept moving while statedir committed")  # not reached: the last attempt raises


class Objects(Protocol):
    """Where _commit_trees reads and writes git objects and moves HEAD."""

    def blobs(self, paths: list[str]) -> list[str]: ...
    def trees(self, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]: ...
    def tree_writer(self) -> contextlib.AbstractContextManager[Callable[[list[tuple[str, str, str, str]]], str]]: ...
    def commit(self, root: str, parent: str | None, text: str, env: dict[str, str], sign: tuple[str, ...], *,
               last: bool) -> str | None: ...


class Plumbing:
    """git's plumbing, a process per step (one `mktree --batch` for all the trees)."""

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree

    def blobs(self, paths: list[str]) -> list[str]:
        return run(self.worktree, "hash-object", "-w", "--", *paths).stdout.decode().split()

    def trees(self, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]:
        return _read_trees(self.worktree, rev, dirs)

    @contextlib.contextmanager
    def tree_writer(self) -> Iterator[Callable[[list[tuple[str, str, str, str]]], str]]:
        """`git mktree --batch` (which sorts and checks each listing): one tree per call."""
        proc = subprocess.Popen(["git", *QUIET, "mktree", "-z", "--missing", "--batch"], cwd=self.worktree,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=environment(None))
        assert proc.stdin is not None and proc.stdout is not None

        def mktree(entries: list[tuple[str, str, str, str]]) -> str:
            listing = "".join(f"{mode} {kind} {oid}\t{name}\0" for mode, kind, oid, name in entries)
            proc.stdin.write(listing.encode("utf-8", "surrogateescape") + b"\0")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            oid = proc.stdout.readline().decode().strip()  # type: ignore[union-attr]
            if not oid:
                raise GitError(f"git mktree failed: {gist(proc.communicate()[1])}")
            return oid

        try:
            yield mktree
            _, stderr = proc.communicate()
        except (OSError, ValueError):
            proc.kill()
            proc.wait()
            raise GitError("git mktree failed: it stopped reading") from None
        if proc.returncode != 0:
            raise GitError(f"git mktree failed: {gist(stderr)}")

    def commit(self, root: str, parent: str | None, text: str, env: dict[str, str], sign: tuple[str, ...], *,
               last: bool) -> str | None:
        sha = _with_identity(self.worktree, ("commit-tree", root, *sign, *(("-p", parent) if parent else ()),
                                             "-F", "-"), env, text)
        moved = run(self.worktree, "update-ref", "-m", f"commit: {text.splitlines()[0]}", "HEAD", sha,
                    parent or "", check=last)  # "": no such ref yet (any id width)
        return sha if moved.returncode == 0 else None


def _read_trees(worktree: Path, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]:
    """The listings of `dirs` at `rev`, in one `cat-file --batch` (a missing one is empty)."""
    query = "".join(f"{rev}:{d}\n" if d else f"{rev}^{{tree}}\n" for d in dirs).encode()
    out = run(worktree, "cat-file", "--batch", stdin=query).stdout
    trees: dict[str, dict[str, tuple[str, str, str]]] = {}
    pos = 0
    for directory in dirs:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        pos = eol + 1
        listing: dict[str, tuple[str, str, str]] = {}
        if header[-1] != b"missing":
            size = int(header[2])
            raw, pos = out[pos:pos + size], pos + size + 1
            if header[1] == b"tree":
                width = len(header[0]) // 2  # SHA-1 or SHA-256 object ids
                entry = re.compile(rb"(\d+) ([^\0]+)\0(.{%d})" % width, re.DOTALL)
                for match in entry.finditer(raw):
                    mode = match[1].decode()
                    listing[match[2].decode("utf-8", "surrogateescape")] = (
                        mode, "tree" if mode == "40000" else "commit" if mode == "160000" else "blob", match[3].hex())
        trees[directory] = listing
    return trees


def _write_trees(ordered: list[str], trees: dict[str, dict[str, tuple[str, str, str]]],
                 files: dict[str, dict[str, tuple[str, str, str]]],
                 mktree: Callable[[list[tuple[str, str, str, str]]], str]) -> str:
    """Write the changed trees, deepest first; returns the new root tree."""
    written: dict[str, str | None] = {}
    for directory in ordered:
        listing = trees[directory]
        listing.update(files.get(directory, {}))
        for sub, oid in written.items():  # this directory's children, written just before
            parent_dir, _, name = sub.rpartition("/")
            if sub and parent_dir == directory:
                listing[name] = ("40000", "tree", oid) if oid else ("", "", "")
        entries = [(mode, kind, oid, name) for name, (mode, kind, oid) in listing.items() if mode]
        if not entries and directory:
            written[directory] = None  # an emptied directory leaves its parent
            continue
        written[directory] = mktree(entries)
    root = written.get("")
    if not root:
        raise GitError("the commit's root tree could not be written")
    return root


def _with_identity(worktree: Path, args: tuple[str, ...], env: dict[str, str], text: str) -> str:
    """Run a committing command; without a configured identity, commit as statedir."""
    proc = run(worktree, *args, env=env, stdin=text.encode(), check=False)
    if proc.returncode != 0 and b"tell me who you are" in proc.stderr + proc.stdout:
        proc = run(worktree, *args, env={**env, **_FALLBACK_IDENTITY}, stdin=text.encode(), check=False)
    if proc.returncode != 0:
        command = next(a for a in args if not a.startswith("-"))
        raise GitError(f"git {command} failed: {gist(proc.stderr or proc.stdout)}")
    return proc.stdout.decode().strip()

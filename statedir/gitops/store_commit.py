"""A commit of exactly the store's changed files, on top of HEAD, with the user's index held.

git's index lock is held for as little as can be: a writer killed while it holds it leaves it
behind, and the user's own commits fail on it until a statedir command releases it. Everything
no git reads before a ref names it (blobs, trees, the commit object) and the next index are made
before the lock is taken; under it the next index is put in place and HEAD moved. Large
repositories (whose index refresh would lstat() every tracked file) and long-lived in-process
callers build the commit from the trees on the changed paths alone, by git's plumbing or with
libgit2, and hold the lock only for the ref update; small ones commit with one
`git commit --only`, under the lock (see `_porcelain` for why).
"""
from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from statedir import fault_injection
from statedir.errors import GitError
from statedir.gitops import git, index_lock, index_splice, indexfile, tree_bytes
from statedir.gitops.git import git_dir, head, update_index
from statedir.gitops.plumbing import Plumbing, with_identity

if TYPE_CHECKING:
    from statedir.gitops import libgit

# Above this size of the user's index, `git commit --only` (which lstat()s every tracked file to
# refresh the index) costs more than building the commit with plumbing that touches no work tree;
# statedir.gitops.index_splice (else git's update-index), not statedir.gitops.indexfile's whole
# parse, then brings the next index to the commit.
PLUMBING_INDEX_BYTES = 1 << 20


def commit(worktree: Path, paths: list[str], text: str, *, author: str | None = None,
           plumbing_above: int = PLUMBING_INDEX_BYTES, signing_key: str | None = None,
           objects: libgit.LibgitBackend | None = None) -> str:
    """Commit exactly `paths` (worktree-relative, added, changed or deleted) on top of HEAD.

    Nothing the user staged or left unstaged elsewhere is swept in, and afterwards the
    user's index agrees with HEAD for these paths. First, with no lock of git's taken: the
    blobs, the trees on the changed paths, the commit object (none of which any git reads
    before a ref names it) and the next index, begun from the user's (index_lock.Index). Then,
    holding git's `index.lock`: the next index replaces the user's (begun again if the user's
    git wrote the index meanwhile), and HEAD moves by compare-and-swap (a commit built again
    on top of a HEAD that moved). A small repository commits by `git commit --only` instead.
    With `signing_key` (as git's user.signingKey takes it) git signs the commit (gpg.format=ssh).
    With `objects` (a long-lived caller's in-process object store, see statedir.gitops.libgit) the
    blobs, trees and commit are made with no git process.
    """
    env = _author(author) if author else {}
    sign: tuple[str, ...] = ()
    if signing_key:
        env.update(_signing(signing_key))
        sign = ("-S",)
    gitdir = git_dir(worktree)
    parent = head(worktree)
    inprocess = objects if objects is not None and objects.usable(parent, sign, paths) else None
    index = index_lock.Index(gitdir)
    large = index.index.is_file() and index.index.stat().st_size > plumbing_above
    if parent is not None and not large and inprocess is None:
        return _porcelain(worktree, index, paths, text, env, sign, parent)
    store: CommitBackend = inprocess or Plumbing(worktree)
    present = [p for p in paths if (worktree / p).is_file()]  # the others are deleted
    blobs = dict(zip(present, store.blobs(present), strict=True)) if present else {}
    root = _tree(store, worktree, paths, parent, blobs)
    made = store.prepare(root, parent, text, env, sign)
    try:
        _next_index(worktree, gitdir, index, paths, blobs, large, parent)
        with index_lock.held(gitdir, git.LOCK_RETRY_SECONDS):
            if not index.current():  # the user's git wrote the index meanwhile: begin again from theirs
                _next_index(worktree, gitdir, index, paths, blobs, large, parent)
            index.publish()  # before HEAD moves
            _fault("during_commit")
            sha = store.commit(root, parent, text, env, sign, last=False, made=made) \
                if head(worktree) == parent else None
            if sha is None:  # HEAD moved since it was read (a commit of the user's): built on top of it
                sha = _commit_trees(worktree, paths, text, env, head(worktree), sign, store, blobs)
    finally:
        index.discard()
    return sha


def _porcelain(worktree: Path, index: index_lock.Index, paths: list[str], text: str, env: dict[str, str],
               sign: tuple[str, ...], parent: str) -> str:
    """A small repository's commit, by one `git commit --only` (it builds the commit in a
    temporary index of its own, from HEAD plus these paths): one git process under the lock,
    where plumbing would take five per transition (hash-object, cat-file, mktree, commit-tree
    ahead of it, update-ref under it), for a lock held a few milliseconds less."""
    gitdir = index.index.parent
    try:
        _next_index(worktree, gitdir, index, paths, {}, False, parent)
        with index_lock.held(gitdir, git.LOCK_RETRY_SECONDS):
            if not index.current():  # the user's git wrote the index meanwhile: begin again from theirs
                _next_index(worktree, gitdir, index, paths, {}, False, parent)
            index.publish()  # before HEAD moves
            index.start()  # the commit's refreshed index is written here, and published after it
            _fault("during_commit")
            for attempt in range(3):
                try:
                    with_identity(worktree, ("--literal-pathspecs", "commit", "-q", "--no-verify", "--allow-empty",
                                              *sign, "--only", "-F", "-", "--", *paths), {**env, **index.env}, text)
                    break
                except GitError as exc:  # HEAD moved under it (a ref update of the user's): build it again
                    if "cannot lock ref" not in exc.message or attempt == 2:
                        raise
            sha = head(worktree)
            index.publish()
    finally:
        index.discard()
    if sha is None or sha == parent:
        raise GitError("git commit did not move HEAD")
    return sha


def _next_index(worktree: Path, gitdir: Path, index: index_lock.Index, paths: list[str], blobs: dict[str, str],
                large: bool, parent: str | None) -> None:
    """Begin the next index from the user's and bring it to the work tree for `paths`: in-process
    where that index is plain (parsed whole where small, spliced where large), else by `git
    update-index`."""
    index.start()
    width = len(parent) // 2 if parent else 20
    if large and parent is not None and index_splice.splice(gitdir, worktree, index.next, paths, width, blobs):
        return
    if large or parent is None or indexfile.update(gitdir, worktree, index.next, paths, width, blobs) is None:
        update_index(worktree, paths, env=index.env)


def _author(actor: str) -> dict[str, str]:
    """git's author for an actor: git refuses some names (only punctuation, angle brackets,
    control characters), so those are cleaned; the trailers keep the actor exactly."""
    name = "".join(c for c in actor if c >= " " and c not in "<>\x7f").strip(" .,:;\"'")
    local = re.sub(r"[^A-Za-z0-9._-]+", "-", actor).strip(".-") or "actor"
    return {"GIT_AUTHOR_NAME": name or "actor", "GIT_AUTHOR_EMAIL": f"{local}@statedir.invalid"}


def _signing(key: str) -> dict[str, str]:
    """The configuration, as environment variables (after any the caller's environment set),
    that makes git sign with an SSH key: gpg.format=ssh, user.signingKey=KEY."""
    first = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
    pairs = (("gpg.format", "ssh"), ("user.signingKey", key))
    env = {"GIT_CONFIG_COUNT": str(first + len(pairs))}
    for n, (name, value) in enumerate(pairs, first):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = name, value
    return env


def _fault(name: str) -> None:
    fault_injection.point(name)


def _tree(store: CommitBackend, worktree: Path, paths: list[str], parent: str | None, blobs: dict[str, str]) -> str:
    """The root tree of `parent` with `paths` as `blobs` has them (a path it lacks: removed);
    only the trees on their paths are rebuilt from the parent's (one listing each)."""
    # directory -> name -> (mode, type, object id); "" is the root
    files: dict[str, dict[str, tuple[str, str, str]]] = {}
    for rel, oid in blobs.items():
        executable = (worktree / rel).stat().st_mode & 0o100
        directory, _, name = rel.rpartition("/")
        files.setdefault(directory, {})[name] = ("100755" if executable else "100644", "blob", oid)
    for rel in set(paths) - set(blobs):
        directory, _, name = rel.rpartition("/")
        files.setdefault(directory, {})[name] = ("", "", "")  # removed
    dirs = {""}
    for directory in files:
        parts = directory.split("/") if directory else []
        dirs.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    ordered = sorted(dirs, key=lambda d: (-d.count("/") - (d != ""), d))  # deepest first, root last
    edit = getattr(store, "edit_trees", None)  # in-process: only the changed names are handed over
    if edit is not None and (root := edit(parent, ordered, files)) is not None:
        return root
    trees = store.trees(parent, ordered) if parent else {d: {} for d in ordered}
    with store.tree_writer() as mktree:
        return _write_trees(ordered, trees, files, mktree)


def _commit_trees(worktree: Path, paths: list[str], text: str, env: dict[str, str], parent: str | None,
                  sign: tuple[str, ...] = (), objects: CommitBackend | None = None,
                  blobs: dict[str, str] | None = None) -> str:
    """A commit that reads no index, on `parent`, with HEAD moved to it: the changed files are
    hashed (unless `blobs` has them), the trees on their paths rebuilt, the commit made and HEAD
    compared-and-swapped (a HEAD that moved meanwhile is built upon, up to three times)."""
    store: CommitBackend = objects or Plumbing(worktree)
    if blobs is None:
        present = [p for p in paths if (worktree / p).is_file()]
        blobs = dict(zip(present, store.blobs(present), strict=True)) if present else {}
    for attempt in range(3):
        # Compare-and-swap: a HEAD that moved meanwhile (the user's own commit) fails the
        # update instead of being lost, and the commit is rebuilt on top of it.
        root = _tree(store, worktree, paths, parent, blobs)
        sha = store.commit(root, parent, text, env, sign, last=attempt == 2,
                           made=store.prepare(root, parent, text, env, sign))
        if sha is not None:
            return sha
        parent = head(worktree)
    raise GitError("HEAD kept moving while statedir committed")  # not reached: the last attempt raises


class CommitBackend(Protocol):
    """Where a commit's git objects are read and written and HEAD is moved."""

    def blobs(self, paths: list[str]) -> list[str]: ...
    def trees(self, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]: ...
    def tree_writer(self) -> contextlib.AbstractContextManager[Callable[[list[tuple[str, str, str, str]]], str]]: ...
    def prepare(self, root: str, parent: str | None, text: str, env: dict[str, str],
                sign: tuple[str, ...]) -> str | None: ...
    def commit(self, root: str, parent: str | None, text: str, env: dict[str, str], sign: tuple[str, ...], *,
               last: bool, made: str | None = None) -> str | None: ...


def _write_trees(ordered: list[str], trees: dict[str, dict[str, tuple[str, str, str]]],
                 files: dict[str, dict[str, tuple[str, str, str]]],
                 mktree: Callable[[list[tuple[str, str, str, str]]], str]) -> str:
    """Write the changed trees, deepest first; returns the new root tree."""
    written: dict[str, str | None] = {}
    for directory in ordered:
        listing = trees[directory]
        listing.update(tree_bytes.changes(directory, files, written))
        entries = [(mode, kind, oid, name) for name, (mode, kind, oid) in listing.items() if mode]
        if not entries and directory:
            written[directory] = None  # an emptied directory leaves its parent
            continue
        written[directory] = mktree(entries)
    root = written.get("")
    if not root:
        raise GitError("the commit's root tree could not be written")
    return root

"""git's plumbing for a commit built from trees: a process per step (one `cat-file --batch`
for the parent's trees, one `mktree --batch` for the new ones, `commit-tree`, `update-ref`)."""
from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from statedir.errors import GitError
from statedir.gitops import loose, process, tree_bytes
from statedir.gitops.git import QUIET, environment, gist, git_dir, run

_FALLBACK_IDENTITY = {"GIT_COMMITTER_NAME": "statedir", "GIT_COMMITTER_EMAIL": "statedir@localhost"}


class Plumbing:
    """git's plumbing, a process per step (one `mktree --batch` for all the trees)."""

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree

    def blobs(self, paths: list[str]) -> list[str]:
        return run(self.worktree, "hash-object", "-w", "--", *paths).stdout.decode().split()

    def trees(self, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]:
        return _read_trees(self.worktree, rev, dirs)

    def edit_trees(self, rev: str | None, ordered: list[str],
                   files: dict[str, dict[str, tuple[str, str, str]]]) -> str | None:
        """The new root tree: each directory of `ordered` (deepest first) edited from `rev`'s.
        Where statedir.gitops.loose may write objects, every tree is edited as bytes
        (statedir.gitops.tree_bytes) and written as a loose object here, from the parent's
        trees read as loose objects too where they are (no git process at all); elsewhere a
        small one is listed and written again by `mktree` and a large one (a store's `runs/`)
        edited as bytes and written by `hash-object`. What it costs is the changed names and a
        copy of the bytes, not the directory's entries. None without a parent."""
        if rev is None:
            return None
        width = len(rev) // 2
        gitdir = git_dir(self.worktree)
        if loose.writable(gitdir, self.worktree):
            return self._edited_here(loose.common_dir(gitdir), rev, ordered, files, width)
        raws = _raw_trees(self.worktree, rev, ordered)
        written: dict[str, str | None] = {}
        with self.tree_writer() as mktree:
            for directory in ordered:
                changes = tree_bytes.changes(directory, files, written)
                raw = raws[directory]
                if len(raw) < tree_bytes.LARGE:
                    listing = _parse(raw, width)
                    listing.update(changes)
                    entries = [(mode, kind, oid, name) for name, (mode, kind, oid) in listing.items() if mode]
                    written[directory] = mktree(entries) if entries or not directory else None
                    continue
                edited = tree_bytes.edit(raw, width, changes)
                written[directory] = run(self.worktree, "hash-object", "-w", "-t", "tree", "--stdin",
                                         stdin=edited).stdout.decode().strip() if edited or not directory else None
        return written.get("") or None

    def _edited_here(self, common: Path, rev: str, ordered: list[str],
                     files: dict[str, dict[str, tuple[str, str, str]]], width: int) -> str | None:
        """edit_trees with no git process where the parent's trees are loose (a transition's
        are): each tree edited as bytes and written as a loose object (statedir.gitops.loose)."""
        raws = loose.trees_at(common, rev, ordered, width) or _raw_trees(self.worktree, rev, ordered)
        return loose.write_trees(common, ordered, files, width, raws.__getitem__).root

    @contextlib.contextmanager
    def tree_writer(self) -> Iterator[Callable[[list[tuple[str, str, str, str]]], str]]:
        """`git mktree --batch` (which sorts and checks each listing): one tree per call."""
        proc = process.start(["git", *QUIET, "mktree", "-z", "--missing", "--batch"], str(self.worktree),
                             environment(None), stderr=True)
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
        except BaseException:  # the caller's own failure (a refusal, ^C): git goes too, nothing left open
            proc.kill()
            proc.communicate()
            raise
        if proc.returncode != 0:
            raise GitError(f"git mktree failed: {gist(stderr)}")

    def prepare(self, root: str, parent: str | None, text: str, env: dict[str, str],
                sign: tuple[str, ...]) -> str:
        """The commit object, made ahead of moving HEAD (signed here, with `sign`)."""
        return with_identity(self.worktree, ("commit-tree", root, *sign, *(("-p", parent) if parent else ()),
                                              "-F", "-"), env, text)

    def commit(self, root: str, parent: str | None, text: str, env: dict[str, str], sign: tuple[str, ...], *,
               last: bool, made: str | None = None) -> str | None:
        """HEAD moved from `parent` to the commit (`made`, else made now); None where HEAD moved meanwhile."""
        sha = made or self.prepare(root, parent, text, env, sign)
        moved = run(self.worktree, "update-ref", "-m", f"commit: {text.splitlines()[0]}", "HEAD", sha,
                    parent or "", check=last)  # "": no such ref yet (any id width)
        return sha if moved.returncode == 0 else None


def _read_trees(worktree: Path, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]:
    """The listings of `dirs` at `rev`, in one `cat-file --batch` (a missing one is empty)."""
    return {d: _parse(raw, len(rev) // 2) for d, raw in _raw_trees(worktree, rev, dirs).items()}


def _raw_trees(worktree: Path, rev: str, dirs: list[str]) -> dict[str, bytes]:
    """The tree objects of `dirs` at `rev` as git stores them, in one `cat-file --batch` (a
    missing one, or one that is not a tree, is empty)."""
    query = "".join(f"{rev}:{d}\n" if d else f"{rev}^{{tree}}\n" for d in dirs).encode()
    out = run(worktree, "cat-file", "--batch", stdin=query).stdout
    trees: dict[str, bytes] = {}
    pos = 0
    for directory in dirs:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        pos = eol + 1
        raw = b""
        if header[-1] != b"missing":
            size = int(header[2])
            raw, pos = (out[pos:pos + size] if header[1] == b"tree" else b""), pos + size + 1
        trees[directory] = raw
    return trees


def _parse(raw: bytes, width: int) -> dict[str, tuple[str, str, str]]:
    """A tree object's entries: name -> (mode, type, object id)."""
    listing: dict[str, tuple[str, str, str]] = {}
    for match in re.finditer(rb"(\d+) ([^\0]+)\0(.{%d})" % width, raw, re.DOTALL):
        mode = match[1].decode()
        listing[match[2].decode("utf-8", "surrogateescape")] = (
            mode, "tree" if mode == "40000" else "commit" if mode == "160000" else "blob", match[3].hex())
    return listing


def with_identity(worktree: Path, args: tuple[str, ...], env: dict[str, str], text: str) -> str:
    """Run a committing command; without a configured identity, commit as statedir."""
    proc = run(worktree, *args, env=env, stdin=text.encode(), check=False)
    if proc.returncode != 0 and b"tell me who you are" in proc.stderr + proc.stdout:
        proc = run(worktree, *args, env={**env, **_FALLBACK_IDENTITY}, stdin=text.encode(), check=False)
    if proc.returncode != 0:
        command = next(a for a in args if not a.startswith("-"))
        raise GitError(f"git {command} failed: {gist(proc.stderr or proc.stdout)}")
    return proc.stdout.decode().strip()

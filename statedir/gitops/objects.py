"""git's object store read through one long-lived `git cat-file --batch`: blobs and trees of
any commit, with nothing checked out and neither the index nor HEAD touched. The reader's git is
started by statedir.gitops.process, without subprocess: a transition imports this module (through
`--expect`'s check and the template's history) and loads nothing more for it."""
from __future__ import annotations

import re
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from statedir.errors import GitError, InvalidValue
from statedir.gitops import git, process

if TYPE_CHECKING:
    import subprocess

# One tree entry: mode, name, NUL, the raw object id (20 bytes for SHA-1, 32 for SHA-256); compiled on
# first use (cached by re), since a transition imports this module and reads no tree.
_ENTRY = {width: rb"(?s)(\d+) ([^\0]+)\0(.{%d})" % width for width in (20, 32)}


class ObjectReader:
    """Reads objects by `<rev>:<path>` or object id; one git process for the whole command."""

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree
        self._proc: process.Child | subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def _process(self) -> process.Child | subprocess.Popen[bytes]:
        if self._proc is None:
            try:
                self._proc = process.start(["git", "cat-file", "--batch"], str(self.worktree))
            except OSError as exc:
                raise GitError(f"cannot run git: {exc.strerror}") from None
        return self._proc

    def read(self, spec: str) -> tuple[str, str, bytes] | None:
        """(object id, type, content) of `spec`, or None where it names nothing."""
        return self.read_many([spec])[0]

    def read_many(self, specs: list[str]) -> list[tuple[str, str, bytes] | None]:
        """Several objects in one round trip (a few short names: they must fit git's pipe)."""
        if any("\n" in spec for spec in specs):
            raise InvalidValue("an object name cannot hold a newline")
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        found: list[tuple[str, str, bytes] | None] = []
        try:
            proc.stdin.write("".join(f"{spec}\n" for spec in specs).encode("utf-8", "surrogateescape"))
            proc.stdin.flush()
            for _ in specs:
                header = proc.stdout.readline().split()
                if len(header) != 3:
                    found.append(None)  # "<spec> missing" / "ambiguous"
                    continue
                size = int(header[2])
                found.append((header[0].decode(), header[1].decode(), proc.stdout.read(size + 1)[:size]))
        except (OSError, ValueError):
            raise GitError("git cat-file stopped answering") from None
        return found

    def blob(self, spec: str) -> bytes | None:
        found = self.read(spec)
        return found[2] if found and found[1] == "blob" else None

    def tree(self, spec: str) -> dict[str, tuple[str, str]]:
        """A tree's entries, name -> (mode, object id); empty where `spec` is no tree."""
        return entries(self.read(spec))

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin:
                self._proc.stdin.close()
            if self._proc.stdout:
                self._proc.stdout.close()
            self._proc.wait()
            self._proc = None


def entries(found: tuple[str, str, bytes] | None) -> dict[str, tuple[str, str]]:
    """A tree object's entries, name -> (mode, object id); empty for anything but a tree."""
    if not found or found[1] != "tree":
        return {}
    width = len(found[0]) // 2
    return {m[2].decode("utf-8", "surrogateescape"): (m[1].decode(), m[3].hex())
            for m in re.finditer(_ENTRY[width], found[2])}


def resolve(worktree: Path, rev: str) -> str:
    """The commit `rev` names (anything `git rev-parse` takes), or INVALID_VALUE."""
    if not rev or rev.startswith("-") or "\n" in rev or "\0" in rev:
        raise InvalidValue(f"not a revision: {rev!r}", rev=rev)
    proc = git.run(worktree, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
                   check=False)
    sha = proc.stdout.decode().strip()
    if proc.returncode != 0 or not sha:
        raise InvalidValue(f"no commit {rev!r} in this repository", rev=rev)
    return sha


def ids_at(worktree: Path, rev: str, head: str, path: str) -> tuple[str, str | None, str | None]:
    """The commit `rev` names, and the object id at `path` (a folder or a file, repository-relative;
    "" the root) in that commit and in `head` (None where absent): one git process. INVALID_VALUE
    where `rev` names no commit."""
    if not rev or rev.startswith("-") or any(c.isspace() for c in rev) or "\0" in rev:
        raise InvalidValue(f"not a revision: {rev!r}", rev=rev)
    if ":" in rev:  # `:/text`, `HEAD:path`: rev-parse's syntax, not a plain name to peel in a batch
        rev = resolve(worktree, rev)
    if "\n" in path:
        raise InvalidValue(f"a path with a line break cannot be compared: {path!r}", path=path)
    query = f"{rev}^{{commit}}\n{rev}^{{commit}}:{path}\n{head}:{path}\n".encode()
    lines = git.run(worktree, "cat-file", "--batch-check", stdin=query).stdout.decode().splitlines()
    found = [line.split()[0] if len(line.split()) == 3 else None for line in lines]
    if len(found) != 3 or found[0] is None:
        raise InvalidValue(f"no commit {rev!r} in this repository", rev=rev)
    return found[0], found[1], found[2]


def is_ancestor(worktree: Path, ancestor: str, descendant: str) -> bool:
    return git.run(worktree, "merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0


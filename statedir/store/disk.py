"""A store's files on disk: safe paths that never leave the store, atomic writes and appends, its
git work tree and disposable caches. What the journal, checkpoints and expectations work on; the
opened store (statedir.store.store.Store) adds its configuration and the lock."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statedir.errors import BadFile, CorruptStore
from statedir.files import yaml
from statedir.files.parse_cache import ParseCache, digest
from statedir.gitops import git, worktrees

if TYPE_CHECKING:
    from statedir.gitops.libgit import LibgitBackend


class Disk:
    """A store's directory and the git work tree holding it."""

    def __init__(self, root: Path, worktree: Path) -> None:
        self.root = root
        self.worktree = worktree
        self.prefix = self.root.relative_to(worktree).as_posix()
        self.cache_key = digest(self.prefix.encode())[:12]  # one parse cache per store
        # While the lock is held: directories already found to resolve inside the store.
        self._inside: set[Path] | None = None
        self._cache: ParseCache | None = None
        self.objects: LibgitBackend | None = None  # in-process commits (statedir.gitops.libgit), for long-lived callers

    # --- paths ------------------------------------------------------------------------------
    def path(self, rel: str) -> Path:
        """The absolute path of a store file, refusing anything that leaves the store."""
        target = self.root / rel
        parent = target.parent
        if self._inside is None or parent not in self._inside:
            real_parent = Path(os.path.realpath(parent))
            if real_parent != self.root and self.root not in real_parent.parents:
                raise CorruptStore(f"{rel} leads out of the store (a symlinked directory?)", file=rel)
            if self._inside is not None:
                self._inside.add(parent)
        if target.is_symlink():
            raise CorruptStore(f"{rel} is a symlink; statedir does not follow links", file=rel)
        return target

    @property
    def files_worktree(self) -> Path:
        """The work tree of the files runs talk about (`--file`, bus evidence): the store's own,
        but the user's where the store is on a branch of its own (`init --branch`)."""
        if self.worktree == self.root and (self.root / ".git").is_file():
            bound = worktrees.binding(self.worktree)
            if bound is not None and bound[1].resolve() == self.root:
                return git.find_worktree(self.root.parent) or worktrees.main_worktree(self.worktree)
        return self.worktree

    @property
    def cache_dir(self) -> Path:
        """Disposable caches live in the git directory, out of the work tree and the store."""
        return git.git_dir(self.worktree) / "statedir" / f"cache-{self.cache_key}"

    def cache(self) -> ParseCache:
        """The store's parse cache: one per opened store, so a long-lived handle keeps its
        entries in memory between calls."""
        if self._cache is None:
            self._cache = ParseCache(self.cache_dir / "parsed")
        return self._cache

    def git_path(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix != "." else rel

    # --- reading ----------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes | None:
        try:
            return self.path(rel).read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise BadFile(f"{rel} is a directory, not a file", file=rel) from None

    def load(self, rel: str) -> Any:
        """A store file as round-trip YAML data (None when missing)."""
        raw = self.read_bytes(rel)
        return None if raw is None else yaml.load(raw, rel)

    # --- writing ----------------------------------------------------------------------------
    def write_atomic(self, rel: str, data: bytes) -> bool:
        """Replace a file atomically (temp, fsync, rename); False when the bytes are unchanged."""
        target = self.path(rel)
        with contextlib.suppress(FileNotFoundError):
            if target.read_bytes() == data:
                return False
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        return True

    def remove(self, rel: str) -> None:
        """Delete a store file (absent already is fine)."""
        with contextlib.suppress(FileNotFoundError):
            self.path(rel).unlink()

    def append(self, rel: str, text: str, header: str) -> None:
        """Append text at the end of a log, never reading what is already there."""
        target = self.path(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
        fd = os.open(target, flags, 0o644)
        try:
            if os.fstat(fd).st_size == 0:
                text = header + text
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def prune(self, rel: str) -> None:
        """Remove the directories above `rel` that are left empty, up to the store's root."""
        for parent in self.path(rel).parents:
            if parent == self.root or self.root not in parent.parents:
                break
            try:
                parent.rmdir()
            except OSError:  # not empty, or already gone
                if parent.exists():
                    break

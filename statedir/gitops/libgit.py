"""Commits built in-process with libgit2 (pygit2) for long-lived callers.

A transition's commit is built the same way either way (statedir.gitops.store_commit: the changed
blobs, the trees on their paths, a commit, a compare-and-swap of HEAD), but a git process per
commit costs about what the rest of a transition does. A caller that makes many transitions
(the MCP server, `statedir.open(..., inprocess_git=True)`) loads libgit2 once (about 0.1 s)
and then commits without any process. git's own commands stay in charge of the user's index
and of everything libgit2 should not do: a signed commit, dates set in the environment
(`GIT_COMMITTER_DATE`), a group-shared repository; those commits go through git's plumbing.
"""
# Lazy imports: pygit2, an optional dependency (statedir[mcp]): a missing binding is refused with the way to install
#   it.
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from statedir.errors import GitError, InvalidValue
from statedir.gitops import git, loose, tree_bytes

_FALLBACK = ("statedir", "statedir@localhost")  # as gitcommit commits without an identity
_DATES = ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")
_CONVERTING = ("filter", "ident", "working-tree-encoding")  # attributes that make a blob differ from the file


class LibgitBackend:
    """Where a commit's objects are written and HEAD moved with libgit2 (a CommitBackend of
    statedir.gitops.store_commit, beside the git processes' Plumbing): the repository's objects
    and HEAD, opened once in this process (see the module)."""

    def __init__(self, worktree: Path) -> None:
        try:
            import pygit2
        except ImportError:
            raise InvalidValue("committing in-process needs libgit2's Python binding: "
                               "pip install 'statedir[mcp]' (or pygit2)") from None
        self._pygit2 = pygit2
        self.worktree = worktree
        try:
            self._repo = pygit2.Repository(str(worktree))
        except pygit2.GitError as exc:
            raise GitError(f"libgit2 cannot open the repository at {worktree}: {exc}") from None
        self._packs = git.common_dir(Path(self._repo.path)) / "objects" / "pack"  # a linked work tree's are shared
        self._packs_seen = self._stamp()
        config = self._repo.config
        self._shared = "core.sharedrepository" in config
        gitdir = Path(self._repo.path)
        self._common = loose.common_dir(gitdir) if loose.writable(gitdir, worktree) else None
        self._large: tuple[bytes, bytes] | None = None  # the large tree written last: (raw id, bytes)
        self.entries_edited = 0  # tree entries handed to libgit2 by edit_trees (what the tests count)

    def _stamp(self) -> int | None:
        try:
            return os.stat(self._packs).st_mtime_ns
        except OSError:
            return None

    @property
    def repo(self) -> Any:
        """The repository, opened again (about a millisecond) once a `git gc` or `repack` has
        replaced packs: libgit2 keeps every pack it opened, so a long-lived process would hold
        each deleted one (its disk space and a descriptor) for good."""
        stamp = self._stamp()
        if stamp != self._packs_seen:
            self._repo.free()  # its packs' descriptors and maps, now (the object may live on in a cycle)
            self._repo = self._pygit2.Repository(str(self.worktree))
            self._packs_seen = stamp
        return self._repo

    def usable(self, parent: str | None, sign: tuple[str, ...], paths: list[str]) -> bool:
        """Whether this commit can be built here: not signed, no dates from the environment,
        a SHA-1 repository that is not group-shared (libgit2 would not set the group's modes),
        and no path whose content git converts as it commits it (a clean filter such as
        git-crypt's or LFS's, ident, an encoding): those blobs are git's to make."""
        if sign or self._shared or (parent is not None and len(parent) != 40):
            return False
        if any(os.environ.get(name) for name in _DATES):
            return False
        repo = self.repo
        return not any(repo.get_attr(path, name) for path in paths for name in _CONVERTING)

    def blob_ids(self, rev: str | None, paths: list[str]) -> dict[str, tuple[str, int] | None]:
        """As statedir.gitops.git.blob_ids (each path's blob id and size at `rev`), with no git process."""
        out: dict[str, tuple[str, int] | None] = dict.fromkeys(paths)
        if rev is None:
            return out
        root = self.repo[rev].peel(self._pygit2.Tree)
        for path in paths:
            with contextlib.suppress(KeyError):
                entry = root[path]
                if isinstance(entry, self._pygit2.Blob):
                    out[path] = (str(entry.id), entry.size)
        return out

    def ids_at(self, rev: str, head: str, path: str) -> tuple[str, str | None, str | None]:
        """As statedir.gitops.objects.ids_at, with no git process (GIT_ERROR where libgit2 reads
        `rev` otherwise than git: the caller asks git then)."""
        pygit2 = self._pygit2
        repo = self.repo
        try:
            commit = repo.revparse_single(rev).peel(pygit2.Commit)
            trees = [commit.tree, repo[head].peel(pygit2.Tree)]
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise GitError(f"libgit2 cannot read {rev!r}: {exc}") from None
        ids: list[str | None] = []
        for tree in trees:
            try:
                ids.append(str((tree[path] if path else tree).id))
            except KeyError:
                ids.append(None)
        return str(commit.id), ids[0], ids[1]

    def blobs(self, paths: list[str]) -> list[str]:
        return [str(self.repo.create_blob((self.worktree / p).read_bytes())) for p in paths]

    def trees(self, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]:
        root = self.repo[rev].peel(self._pygit2.Tree)
        listings: dict[str, dict[str, tuple[str, str, str]]] = {}
        for directory in dirs:
            listing: dict[str, tuple[str, str, str]] = {}
            try:
                tree = root[directory] if directory else root
            except KeyError:
                tree = None
            if isinstance(tree, self._pygit2.Tree):
                for entry in tree:
                    mode = f"{entry.filemode:o}"
                    kind = "tree" if mode == "40000" else "commit" if mode == "160000" else "blob"
                    listing[str(entry.name)] = (mode, kind, str(entry.id))
            listings[directory] = listing
        return listings

    def edit_trees(self, rev: str | None, ordered: list[str],
                   files: dict[str, dict[str, tuple[str, str, str]]]) -> str | None:
        """The root tree of `rev` with `files` (directory -> name -> (mode, type, id); an empty
        mode removes the name) put in, each directory in `ordered` (deepest first, root last)
        edited from its tree in `rev` as bytes (statedir.gitops.tree_bytes) and written as a
        loose object (statedir.gitops.loose): only the changed names are looked at, and a
        large tree this process wrote last (a store's `runs/`) is edited from memory, not read
        again, so the cost does not grow with the directory. Where statedir may not write the
        objects itself, libgit2's tree builders do it. None where a name is not UTF-8: the
        caller lists and writes those trees whole."""
        if self._common is None:
            return self._built(rev, ordered, files)
        at: dict[str, bytes | None] = {"": self._read(self.repo[rev].peel(self._pygit2.Tree).id.raw) if rev else b""}
        made = loose.write_trees(self._common, ordered, files, 20,
                                 lambda directory: tree_bytes.tree_at(at, directory, 20, self._read) or b"")
        self.entries_edited += made.edited
        if made.large is not None:
            self._large = made.large
        return made.root

    def _read(self, oid: bytes) -> bytes:
        if self._large is not None and self._large[0] == oid:
            return self._large[1]
        kind, data = self.repo.read(self._pygit2.Oid(raw=oid))[:2]
        if kind != self._pygit2.GIT_OBJECT_TREE:
            raise GitError(f"libgit2 read a {kind} where a tree was: {oid.hex()}")
        return bytes(data)

    def _built(self, rev: str | None, ordered: list[str],
               files: dict[str, dict[str, tuple[str, str, str]]]) -> str | None:
        """edit_trees by libgit2's tree builders, one a directory (a group-shared repository)."""
        pygit2 = self._pygit2
        repo = self.repo
        root = repo[rev].peel(pygit2.Tree) if rev else None
        written: dict[str, str | None] = {}
        try:
            for directory in ordered:
                base = None
                if root is not None:
                    with contextlib.suppress(KeyError):
                        base = root[directory] if directory else root
                builder = repo.TreeBuilder(base) if isinstance(base, pygit2.Tree) else repo.TreeBuilder()
                changes = tree_bytes.changes(directory, files, written)
                for name, (mode, _, oid) in changes.items():
                    self.entries_edited += 1
                    if mode:
                        builder.insert(name, pygit2.Oid(hex=oid), int(mode, 8))
                    elif builder.get(name) is not None:
                        builder.remove(name)
                if not len(builder) and directory:
                    written[directory] = None  # an emptied directory leaves its parent
                    continue
                written[directory] = str(builder.write())
        except UnicodeEncodeError:
            return None
        except pygit2.GitError as exc:
            raise GitError(f"libgit2 could not write a tree: {exc}") from None
        return written.get("") or None

    @contextlib.contextmanager
    def tree_writer(self) -> Iterator[Callable[[list[tuple[str, str, str, str]]], str]]:
        def mktree(entries: list[tuple[str, str, str, str]]) -> str:
            builder = self.repo.TreeBuilder()
            try:
                for mode, _, oid, name in entries:
                    builder.insert(name, self._pygit2.Oid(hex=oid), int(mode, 8))
            except UnicodeEncodeError:  # a name that is not UTF-8 (kept as surrogates): written as bytes
                return self._raw_tree(entries)
            return str(builder.write())

        try:
            yield mktree
        except self._pygit2.GitError as exc:
            raise GitError(f"libgit2 could not write a tree: {exc}") from None

    def _raw_tree(self, entries: list[tuple[str, str, str, str]]) -> str:
        """A tree object written from its entries as git lays them out (names as bytes, sorted
        with a directory's name taken as ending in '/'), for names TreeBuilder cannot take."""
        named = [(name.encode("utf-8", "surrogateescape"), mode, oid) for mode, _, oid, name in entries]
        named.sort(key=lambda e: e[0] + b"/" if e[1] == "40000" else e[0])
        data = b"".join(b"%s %s\0%s" % (mode.encode(), name, bytes.fromhex(oid)) for name, mode, oid in named)
        return str(self.repo.odb.write(self._pygit2.enums.ObjectType.TREE, data))

    def prepare(self, root: str, parent: str | None, text: str, env: dict[str, str],
                sign: tuple[str, ...]) -> None:
        """Nothing ahead: the commit is written as HEAD moves to it (a small object, in-process)."""
        return None

    def commit(self, root: str, parent: str | None, text: str, env: dict[str, str], sign: tuple[str, ...], *,
               last: bool, made: str | None = None) -> str | None:
        """The commit, with HEAD moved from `parent` to it; None where HEAD moved meanwhile
        (libgit2 compares HEAD with the first parent under the ref's lock)."""
        config, given = self._config(), _given()
        committer = self._signature("COMMITTER", env, config, given)
        author = self._signature("AUTHOR", env, config, given, committer)
        deadline = time.monotonic() + git.LOCK_RETRY_SECONDS
        delay = 0.01
        while True:
            try:
                oid = self.repo.create_commit("HEAD", author, committer, text, self._pygit2.Oid(hex=root),
                                              [self._pygit2.Oid(hex=parent)] if parent else [])
                return str(oid)
            except self._pygit2.GitError as exc:
                if "current tip is not the first parent" in str(exc) and not last:
                    return None
                raise GitError(f"libgit2 could not commit: {exc}") from None
            except OSError as exc:  # a ref's lock taken (a git of the user's): waited for, as git.run does
                if "failed to lock" not in str(exc) or time.monotonic() >= deadline:
                    raise GitError(f"libgit2 could not commit: {exc}") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def _config(self) -> Any:
        """The configuration git reads: libgit2's own, unless the environment names other
        files (GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM), which libgit2 ignores."""
        env = os.environ
        if not any(name in env for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM")):
            return self.repo.config
        levels = self._pygit2.enums.ConfigLevel
        system = None if env.get("GIT_CONFIG_NOSYSTEM") else env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig")
        xdg = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "git" / "config"
        found = [(system, levels.SYSTEM)]
        found += [(env["GIT_CONFIG_GLOBAL"], levels.GLOBAL)] if "GIT_CONFIG_GLOBAL" in env else \
            [(str(xdg), levels.XDG), (str(Path.home() / ".gitconfig"), levels.GLOBAL)]
        config = self._pygit2.Config()
        for path, level in [*found, (str(Path(self.repo.path) / "config"), levels.LOCAL)]:
            if path and os.path.isfile(path):
                config.add_file(path, level)
        return config

    def _signature(self, role: str, env: dict[str, str], config: Any, given: dict[str, str],
                   default: Any = None) -> Any:
        """git's identity for `role`: its variables (the caller's, then the environment's), then
        author.*/committer.* and user.* in the config, then EMAIL for the address; where that
        leaves a part unknown (git refuses then), the committer's (for the author), else
        statedir's own, as gitcommit commits without an identity."""

        def value(name: str) -> str | None:
            found = env.get(f"GIT_{role}_{name}") or os.environ.get(f"GIT_{role}_{name}")
            for key in (f"{role.lower()}.{name.lower()}", f"user.{name.lower()}"):
                if found is None:
                    found = given[key] if key in given else config[key] if key in config else None
            return found

        name, email = value("NAME"), value("EMAIL") or os.environ.get("EMAIL") or None
        if not name or not email:
            return default if default is not None else self._pygit2.Signature(*_FALLBACK)
        return self._pygit2.Signature(name, email)


def _given() -> dict[str, str]:
    """Configuration given in the environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n/VALUE_n),
    which outranks every file."""
    given: dict[str, str] = {}
    with contextlib.suppress(ValueError):
        for n in range(int(os.environ.get("GIT_CONFIG_COUNT") or 0)):
            key = os.environ.get(f"GIT_CONFIG_KEY_{n}")
            if key:
                given[key.lower()] = os.environ.get(f"GIT_CONFIG_VALUE_{n}", "")
    return given

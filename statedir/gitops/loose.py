"""git objects written by statedir itself, as loose objects, where the repository lets it.

A loose object is `TYPE SIZE\\0DATA`, zlib-compressed, in `objects/XX/YYYY...` under its id; git
reads one that any writer made. statedir writes the blobs of the in-process index update
(statedir.gitops.indexfile) and the large trees a transition edits (a store's `runs/` of 10,000
entries, about 320 kB): those at zlib level 0, since a tree's entries are mostly object ids,
random bytes that level 1 shrinks by a quarter in forty times the time, and git's next pack
compresses them anyway. Not in a repository shared by a group (git gives its objects the group's
permissions) or owned by another user (which git refuses): there the caller has git do it.
"""
from __future__ import annotations

import _thread
import contextlib
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from statedir.gitops import tree_bytes
from statedir.gitops.object_ids import hashed


def writable(gitdir: Path, worktree: Path) -> bool:
    """Whether statedir may write this repository's objects and index itself."""
    common = common_dir(gitdir)
    return not _shared(common) and _owned(common, worktree)


def common_dir(gitdir: Path) -> Path:
    """Where the repository's objects and config are: a linked work tree's git directory names it."""
    pointer = gitdir / "commondir"
    return (gitdir / pointer.read_text().strip()).resolve() if pointer.is_file() else gitdir


def write(common: Path, kind: bytes, data: bytes, width: int, level: int = 1) -> bytes:
    """Store `data` as a loose object of `kind` (b"blob", b"tree") unless it is there already;
    returns its binary id."""
    body = b"%s %d\0" % (kind, len(data)) + data
    oid = hashed(body, width).digest()
    hexid = oid.hex()
    target = common / "objects" / hexid[:2] / hexid[2:]
    if target.exists():
        with contextlib.suppress(OSError):  # as git does: an old unreachable copy is not pruned meanwhile
            os.utime(target)
        return oid
    tmp = target.parent / f"tmp_obj_statedir_{os.getpid()}_{_thread.get_ident()}"  # one per writer thread
    for attempt in range(5):  # a `git gc` (prune-packed) may remove the emptied directory meanwhile
        _folder(target.parent)
        try:
            tmp.unlink(missing_ok=True)  # read-only, left by a writer of this pid and thread killed before its rename
            tmp.write_bytes(zlib.compress(body, level))
            break
        except FileNotFoundError:
            if attempt == 4:
                raise
    os.chmod(tmp, 0o444)
    os.replace(tmp, target)
    return oid


def _folder(folder: Path) -> None:
    """An object folder (`objects/XX`), made with the mode of `objects/` itself where new: a
    repository a group shares (set in any of git's config files) has it group-writable."""
    try:
        folder.mkdir()
    except FileExistsError:
        return
    with contextlib.suppress(OSError):
        os.chmod(folder, os.stat(folder.parent).st_mode & 0o7777)


def read(common: Path, oid: str) -> tuple[bytes, bytes] | None:
    """(kind, data) of the loose object `oid` (hex), None where it is not loose here (packed, or
    in an alternate): the caller asks git."""
    try:
        body = zlib.decompress((common / "objects" / oid[:2] / oid[2:]).read_bytes())
    except (OSError, zlib.error):
        return None
    nul = body.find(b"\0")
    kind, _, size = body[:nul].partition(b" ")
    return (kind, body[nul + 1:]) if size.isdigit() and int(size) == len(body) - nul - 1 else None


def trees_at(common: Path, commit: str, dirs: list[str], width: int) -> dict[str, bytes] | None:
    """The tree objects of `dirs` (b"" where no tree is) in the commit `commit`, read from loose
    objects alone (a transition's last commit and the trees it wrote are loose); None where one
    of them is not loose."""
    found = read(common, commit)
    if found is None or found[0] != b"commit" or not found[1].startswith(b"tree "):
        return None
    at: dict[str, bytes | None] = {"": _tree(common, found[1][5:5 + 2 * width].decode())}  # directory -> its tree
    out: dict[str, bytes] = {}
    for directory in dirs:
        raw = tree_bytes.tree_at(at, directory, width, lambda oid: _tree(common, oid.hex()))
        if raw is None:
            return None
        out[directory] = raw
    return out


class Written(NamedTuple):
    root: str | None  # the new root tree's id (hex)
    large: tuple[bytes, bytes] | None  # the last large tree written: (raw id, bytes)
    edited: int  # names changed in the trees


def write_trees(common: Path, ordered: list[str], files: dict[str, dict[str, tree_bytes.Change]], width: int,
                parent_tree: Callable[[str], bytes]) -> Written:
    """A commit's trees: each directory of `ordered` (deepest first, root last) edited as bytes
    from `parent_tree(directory)` (the parent commit's, b"" where none) with `files` and the
    directories written before it, and written here (a large one at zlib level 0)."""
    written: dict[str, str | None] = {}
    large, edited = None, 0
    for directory in ordered:
        changes = tree_bytes.changes(directory, files, written)
        edited += len(changes)
        data = tree_bytes.edit(parent_tree(directory), width, changes)
        if not data and directory:
            written[directory] = None  # an emptied directory leaves its parent
            continue
        big = len(data) >= tree_bytes.LARGE
        oid = write(common, b"tree", data, width, level=0 if big else 1)
        if big:
            large = (oid, data)
        written[directory] = oid.hex()
    return Written(written.get("") or None, large, edited)


def _tree(common: Path, oid: str) -> bytes | None:
    found = read(common, oid)
    return found[1] if found is not None and found[0] == b"tree" else None


def _owned(gitdir: Path, worktree: Path) -> bool:
    """Whether this user owns the repository (git refuses one it does not, unless told it is safe)."""
    uid = os.geteuid()
    return gitdir.stat().st_uid == uid and worktree.stat().st_uid == uid


def _shared(gitdir: Path) -> bool:
    """A repository shared by a group wants objects with the group's permissions: git's job."""
    try:
        return b"sharedrepository" in (gitdir / "config").read_bytes().lower()
    except OSError:
        return True

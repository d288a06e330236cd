"""The next index for a few store paths in a large index, by splicing its bytes.

`statedir.gitops.indexfile` parses every entry, which costs more than git itself once an
index holds tens of thousands of files; `git update-index` reads and rewrites the whole index
too, and both cost a store of 10,000 runs tens of milliseconds a transition. Here only the
touched entries are looked at: each is found by a binary search over the sorted entries (an
entry boundary is recognised from any offset: see `_entry_at`), replaced, added or cut, and the
index is written from slices of the old bytes with one pass of hashing for its checksum. What
stays proportional to the index is that pass and the write, both in C.

The cache-tree (TREE) and the other extensions that describe entries by position are dropped,
as the format allows and statedir.gitops.indexfile does (git rebuilds the cache-tree at the
user's next commit); an EOIE extension (where the entries end) is written so that the next
splice finds the end of the entries without searching. Anything unusual returns None and
writes nothing, and the caller runs `git update-index`: index version 4, a split or sparse
index, a touched entry with flags or in conflict, a file where a directory is (or the
reverse), a touched file statedir has no blob for, an index this module cannot find its way in.

Format: Documentation/gitformat-index.txt in git's sources.
"""
from __future__ import annotations

import _thread
import os
import stat
import struct
from pathlib import Path

from statedir.gitops import indexfile, loose
from statedir.gitops.object_ids import hashed

_MODES = {struct.pack(">I", mode) for mode in (0o100644, 0o100755, 0o120000, 0o160000)}
_EXTENDED, _UNUSUAL = 0x4000, 0xB000  # flags: extended flags follow; assume-valid or a conflict's stage
_KNOWN_EXTENDED = 0x6000  # extended flags: skip-worktree, intent-to-add
_KEPT = {b"REUC"}  # optional extensions keyed by path, not position: kept as they are
_LONGEST = 4096 + 80  # bytes of the longest entry: a path of 4095 bytes and its header


class _Unusual(Exception):
    """This index or these paths are git's to update."""


def splice(gitdir: Path, worktree: Path, index: Path, paths: list[str], width: int,
           known: dict[str, str]) -> bool:
    """Bring `index` (a file of its own, replaced by rename) to the work tree for `paths`
    (worktree-relative): changed or added files get fresh entries naming the blobs in `known`
    (hex ids, as the commit made them), deleted ones none. False, with nothing written, where
    git has to do it."""
    if not loose.writable(gitdir, worktree):
        return False
    try:
        raw = index.read_bytes()
        pieces = _pieces(raw, worktree, paths, width, known)
    except (_Unusual, OSError, ValueError, struct.error):
        return False
    digest = hashed(b"", width, sum(len(piece) for piece in pieces))
    for piece in pieces:
        digest.update(piece)
    tmp = index.with_name(f"{index.name}.{os.getpid()}.{_thread.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            os.fchmod(fd, os.stat(index).st_mode & 0o7777)  # the user's index's own mode (a group's, say)
            _write_all(fd, [*pieces, digest.digest()])
        finally:
            os.close(fd)
        os.replace(tmp, index)
    except BaseException:  # a full disk, ^C: no half-written file left beside the index
        tmp.unlink(missing_ok=True)
        raise
    return True


def _pieces(raw: bytes, worktree: Path, paths: list[str], width: int,
            known: dict[str, str]) -> list[bytes | memoryview]:
    """The new index's bytes before its checksum, as slices of `raw` and the fresh entries."""
    if len(raw) < 12 + width or raw[:4] != b"DIRC":
        raise _Unusual
    version, count = struct.unpack(">II", raw[4:12])
    if version not in (2, 3):
        raise _Unusual
    index = _Entries(raw, width, _entries_end(raw, width), version)
    index.check_end()
    view = memoryview(raw)
    pieces: list[bytes | memoryview] = []
    at = 12
    for name, path in sorted({(path.encode("utf-8", "surrogateescape"), path) for path in paths}):
        start, end = index.find(name)  # end is None where no entry has this path
        if end is not None and index.flags(start) & (_EXTENDED | _UNUSUAL):
            raise _Unusual  # skip-worktree, intent-to-add, assume-valid, a conflict
        fresh = _fresh(worktree, name, path, width, known)
        if fresh is not None and end is None:
            index.check_addable(name, start)
        pieces.append(view[at:start])
        if fresh is not None:
            pieces.append(fresh)
        count += (fresh is not None) - (end is not None)
        at = start if end is None else end
    pieces.append(view[at:index.end])
    end = 12 + sum(len(piece) for piece in pieces)  # in the new index, after its 12-byte header
    kept = _extensions(raw, index.end, width)
    pieces.extend(kept)
    pieces.append(_eoie(end, kept, width))
    pieces.insert(0, b"DIRC" + struct.pack(">II", version, count))
    return pieces


def _fresh(worktree: Path, name: bytes, path: str, width: int, known: dict[str, str]) -> bytes | None:
    """The entry for a file as the work tree has it (None where it is deleted)."""
    try:
        st = os.lstat(worktree / path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode) or path not in known:
        raise _Unusual
    oid = bytes.fromhex(known[path])
    if len(oid) != width:
        raise _Unusual
    body = indexfile.header(st, oid, name) + name
    return body + b"\0" * (8 - len(body) % 8)  # 1 to 8 NULs: the entry ends on 8 bytes


class _Entries:
    """The sorted entries of an index's bytes, searched without reading them all."""

    def __init__(self, raw: bytes, width: int, end: int, version: int = 2) -> None:
        self.raw, self.width, self.end = raw, width, end
        self.extended = _EXTENDED if version >= 3 else 0  # a version 2 entry has no extended flags
        self.fixed = 40 + width + 2  # an entry's header, up to and with its flags
        self.no_file: set[bytes] = set()  # directories of added paths found to be no file's path

    def flags(self, start: int) -> int:
        return int.from_bytes(self.raw[start + self.fixed - 2:start + self.fixed], "big")

    def entry_at(self, start: int) -> tuple[bytes, int] | None:
        """(path, end) of the entry starting at `start`, or None where no entry can start there:
        its mode is a file's, its flags have extended ones only in version 3 and only the two git
        defines (a path's letters read as flags set that bit), their length is its path's, and
        NULs pad it to 8 bytes."""
        raw, fixed = self.raw, self.fixed
        if start + fixed > self.end or raw[start + 24:start + 28] not in _MODES:
            return None
        if start > 12 and raw[start - 1]:  # every entry but the first follows the NULs that pad the one before
            return None
        flags = int.from_bytes(raw[start + fixed - 2:start + fixed], "big")
        if flags & _EXTENDED & ~self.extended:
            return None
        offset = fixed
        if flags & _EXTENDED:
            if int.from_bytes(raw[start + fixed:start + fixed + 2], "big") & ~_KNOWN_EXTENDED:
                return None
            offset += 2
        nul = raw.find(b"\0", start + offset, min(self.end, start + _LONGEST))
        if nul < 0:
            return None
        length = nul - start - offset
        if length != (flags & 0xFFF) and not (flags & 0xFFF == 0xFFF and length >= 0xFFF):
            return None
        end = start + (offset + length + 8) // 8 * 8
        if end > self.end or raw.count(b"\0", nul, end) != end - nul:
            return None
        return raw[start + offset:nul], end

    def next_start(self, offset: int) -> int:
        """The first entry boundary at or after `offset` (every entry starts 4 bytes past a
        multiple of 8), an entry that the one after it confirms; `end` when none is left."""
        start = offset + (4 - offset) % 8
        while start < self.end:
            found = self.entry_at(start)
            if found is not None:
                after = self.entry_at(found[1]) if found[1] < self.end else None
                if found[1] == self.end or (after is not None and after[0] >= found[0]):
                    return self._alone(start)
            start += 8
        return self.end

    def _alone(self, start: int) -> int:
        """`start`, where no other seeming entry begun up to 40 bytes before lies over it: a
        gid, a time or an id that reads as a file's mode makes one inside a real entry's header
        (its path a tail of the real one's, or the real one a tail of it). Where two lie over each
        other, which is real is left to git."""
        for back in range(8, self.fixed - 29, 8):  # where a mode can lie in an entry's header
            at = start - back
            found = self.entry_at(at) if at >= 12 and self.raw[at + 24:at + 28] in _MODES else None
            if found is not None and found[1] > start:
                raise _Unusual
        return start

    def find(self, name: bytes) -> tuple[int, int | None]:
        """(start, end) of the entry for path `name`, or (where its entry would go, None)."""
        low, high = 12, self.end  # entries before low sort before name; the one at high does not
        below, above = b"", None  # the paths of the entries just before low and at high
        while low < high:
            start = self.next_start(low + (high - low) // 2)
            if start >= high:  # no boundary in the upper half: step from low
                start = low
            found = self.entry_at(start)
            if found is None:
                raise _Unusual
            path, end = found
            if path < below or (above is not None and path > above):  # equal: a conflict's stages
                raise _Unusual  # out of order: not an entry (or not an index git wrote)
            if path == name:
                return start, end
            if path < name:
                low, below = end, path
            else:
                high, above = start, path
        return low, None

    def check_end(self) -> None:
        """That an entry ends where the extensions are taken to begin (an extension this module
        does not know, taken for entries, fails here)."""
        if self.end == 12:
            return
        start = self.next_start(max(12, self.end - 1024))
        if start >= self.end:  # a last entry longer than that: looked for over the longest one
            start = self.next_start(max(12, self.end - _LONGEST - 8))
        if start >= self.end:
            raise _Unusual
        while start < self.end:
            found = self.entry_at(start)
            if found is None:
                raise _Unusual
            start = found[1]

    def check_addable(self, name: bytes, start: int) -> None:
        """An added file may not stand where a directory is, nor under a file (git's rules). The
        directory's entries are not always next to the file's place: `a-b` and `a.b` sort
        between `a` and `a/c`."""
        under = self.find(name + b"/")[0]
        following = self.entry_at(under) if under < self.end else None
        if following is not None and following[0].startswith(name + b"/"):
            raise _Unusual
        parts = name.split(b"/")
        for n in range(1, len(parts)):
            directory = b"/".join(parts[:n])
            if directory not in self.no_file:  # a new run's three files ask once for its folders
                if self.find(directory)[1] is not None:
                    raise _Unusual
                self.no_file.add(directory)


def _entries_end(raw: bytes, width: int) -> int:
    """Where the entries end (the extensions begin): an EOIE that checks out names it, else an
    extension whose chain of sizes reaches the checksum (the first of git's order that does),
    else the checksum itself. `_Entries.check_end` confirms it."""
    tail = len(raw) - width
    eoie = tail - 8 - 4 - width
    if eoie > 12 and raw[eoie:eoie + 8] == b"EOIE" + struct.pack(">I", 4 + width):
        offset = int.from_bytes(raw[eoie + 8:eoie + 12], "big")
        if 12 <= offset <= eoie and _chain(raw, offset, tail) and \
                raw[eoie + 12:tail] == _chain_digest(raw, offset, eoie, width):
            return offset
    for signature in (b"TREE", b"REUC", b"UNTR", b"FSMN", b"IEOT", b"EOIE", b"link", b"sdir"):  # as git writes them
        at = raw.find(signature, 12, tail)
        while at >= 0:
            if _chain(raw, at, tail):
                return at  # an extension before it (a split index's link) fails check_end
            at = raw.find(signature, at + 1, tail)
    return tail


def _chain(raw: bytes, at: int, tail: int) -> bool:
    """Whether extensions starting at `at` follow one another (signature, size, data) to `tail`."""
    while at < tail:
        if at + 8 > tail or not raw[at:at + 4].isalpha():
            return False
        at += 8 + int.from_bytes(raw[at + 4:at + 8], "big")
    return at == tail


def _chain_digest(raw: bytes, at: int, stop: int, width: int) -> bytes:
    """EOIE's hash: over each extension's signature and size, from the entries' end to EOIE."""
    digest = hashed(b"", width)
    while at < stop:
        digest.update(raw[at:at + 8])
        at += 8 + int.from_bytes(raw[at + 4:at + 8], "big")
    return digest.digest()


def _extensions(raw: bytes, at: int, width: int) -> list[bytes | memoryview]:
    """The extensions kept (whole, header and data), in their order; a required one (a split
    index's link, a sparse index) or one unknown leaves the index to git."""
    view, tail = memoryview(raw), len(raw) - width
    kept: list[bytes | memoryview] = []
    while at < tail:
        signature = raw[at:at + 4]
        size = int.from_bytes(raw[at + 4:at + 8], "big")
        if signature in _KEPT:
            kept.append(view[at:at + 8 + size])
        elif signature not in indexfile.DROPPED:
            raise _Unusual
        at += 8 + size
    return kept


def _eoie(end: int, kept: list[bytes | memoryview], width: int) -> bytes:
    """An EOIE extension: where the entries end, and a hash of the extensions between."""
    digest = hashed(b"", width)
    for extension in kept:
        digest.update(bytes(extension[:8]))
    return b"EOIE" + struct.pack(">II", 4 + width, end) + digest.digest()


def _write_all(fd: int, pieces: list[bytes | memoryview]) -> None:
    while pieces:
        written = os.writev(fd, pieces[:1024])
        while pieces and written >= len(pieces[0]):
            written -= len(pieces[0])
            pieces = pieces[1:]
        if written:
            pieces[0] = memoryview(pieces[0])[written:]

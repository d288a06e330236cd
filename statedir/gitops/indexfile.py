"""The next index for a few store paths, written in-process where the index is plain.

A transition's commit first brings the user's index to the work tree for the paths it
touches (published before HEAD moves: see gitindex). `git update-index` does that in a
process of its own; for the common index (version 2 or 3, no split or sparse index) this
module does the same work in-process: it hashes the files into loose objects, replaces their
entries, and writes the index anew. The cache-tree and other optional extensions that index
entries by position are dropped, as the index format allows (git rebuilds them); anything
unusual returns False and the caller runs `git update-index` instead: a group-shared
repository, one this user does not own (which git refuses), another index version, a split or
sparse index, conflicts or flagged entries.

Format: Documentation/gitformat-index.txt in git's sources.
"""
from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

from statedir.gitops import loose
from statedir.gitops.object_ids import hashed

# Entries are kept from here on; TREE, UNTR, FSMN, EOIE and IEOT describe entries by position
# or by the trees over them, so they are dropped (git rebuilds them); any other optional one
# (upper-case signature, e.g. REUC, keyed by path) is kept as it was.
DROPPED = {b"TREE", b"UNTR", b"FSMN", b"EOIE", b"IEOT"}
_STAT = struct.Struct(">10I")
_WIDTHS = (20, 32)  # bytes of an object id: SHA-1, SHA-256
_EXTENDED = 0x4000
_STAGE = 0x3000


def update(gitdir: Path, worktree: Path, index: Path, paths: list[str], width: int,
           known: dict[str, str] | None = None) -> dict[str, str] | None:
    """Bring `index` (a file of its own, replaced by rename) to the work tree for `paths`
    (worktree-relative): changed or added files get fresh entries, deleted ones none. Returns
    the blob id (hex) of each path still present; None, with nothing written, where this
    index or these paths need git itself. A path in `known` has that blob already (as git
    made it, through any filter): its file is not read again."""
    if width not in _WIDTHS or not loose.writable(gitdir, worktree):
        return None
    common = loose.common_dir(gitdir)  # a linked work tree (a store on a branch of its own) shares objects
    try:
        raw = index.read_bytes()
    except FileNotFoundError:
        raw = None
    parsed = _parse(raw, width) if raw is not None else (2, [], [])
    if parsed is None:
        return None
    version, entries, extensions = parsed
    touched = {path.encode("utf-8", "surrogateescape"): path for path in paths}
    names = {name for name, _ in entries}
    for name in touched:  # a file where a directory is (or the reverse): git's rules, not ours
        if any(n.startswith(name + b"/") or name.startswith(n + b"/") for n in names - touched.keys()):
            return None
    fresh: list[tuple[bytes, bytes]] = []
    blobs: dict[str, str] = {}
    for name, path in sorted(touched.items()):
        try:
            st = os.lstat(worktree / path)
        except FileNotFoundError:
            continue  # deleted: no entry
        if not stat.S_ISREG(st.st_mode):
            return None
        oid = bytes.fromhex(known[path]) if known and path in known else \
            loose.write(common, b"blob", (worktree / path).read_bytes(), width)
        blobs[path] = oid.hex()
        fresh.append((name, header(st, oid, name)))
    kept = [(n, body) for n, body in entries if n not in touched]
    merged = sorted(kept + fresh, key=lambda e: e[0])
    out = bytearray(b"DIRC" + struct.pack(">II", version, len(merged)))
    for name, body in merged:
        size = len(body) + len(name)
        out += body + name + b"\0" * (8 - size % 8)  # 1 to 8 NULs: the entry ends on 8 bytes
    for signature, data in extensions:
        out += signature + struct.pack(">I", len(data)) + data
    out += hashed(out, width).digest()
    tmp = index.with_name(f"{index.name}.{os.getpid()}.tmp")
    tmp.write_bytes(out)
    os.replace(tmp, index)
    return blobs


def header(st: os.stat_result, oid: bytes, name: bytes) -> bytes:
    """An entry up to its path, for a regular file as lstat found it: stat data, mode (git's
    two for a file), object id, and flags holding the path's length."""
    mode = 0o100755 if st.st_mode & 0o100 else 0o100644
    fields = _STAT.pack(*(v & 0xFFFFFFFF for v in (
        st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9, st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9,
        st.st_dev, st.st_ino, mode, st.st_uid, st.st_gid, st.st_size)))
    return fields + oid + struct.pack(">H", min(len(name), 0xFFF))


def _parse(raw: bytes, width: int) -> tuple[int, list[tuple[bytes, bytes]], list[tuple[bytes, bytes]]] | None:
    """(version, [(path, entry bytes without its name)], kept extensions), or None when this
    index is not one to patch here: another version, conflicts, flags, a required extension."""
    if len(raw) < 12 + width or raw[:4] != b"DIRC" or hashed(raw[:-width], width).digest() != raw[-width:]:
        return None
    version, count = struct.unpack(">II", raw[4:12])
    if version not in (2, 3):
        return None
    fixed = 40 + width + 2
    pos = 12
    entries: list[tuple[bytes, bytes]] = []
    try:
        for _ in range(count):
            (flags,) = struct.unpack(">H", raw[pos + fixed - 2:pos + fixed])
            if flags & (_EXTENDED | _STAGE | 0x8000):  # skip-worktree, intent-to-add, a conflict, assume-valid
                return None
            end = raw.index(b"\0", pos + fixed)
            entries.append((raw[pos + fixed:end], raw[pos:pos + fixed]))
            pos += (end - pos + 8) // 8 * 8
        extensions: list[tuple[bytes, bytes]] = []
        while pos < len(raw) - width:
            signature = raw[pos:pos + 4]
            (size,) = struct.unpack(">I", raw[pos + 4:pos + 8])
            if not b"A" <= signature[:1] <= b"Z":
                return None  # a required extension (a split index's link, a sparse index)
            if signature not in DROPPED:
                extensions.append((signature, raw[pos + 8:pos + 8 + size]))
            pos += 8 + size
    except (ValueError, struct.error):
        return None
    return (version, entries, extensions) if pos == len(raw) - width else None

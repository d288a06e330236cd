"""A git tree object edited as its bytes (issue 37): the parent's listing is copied span by span
and only the changed names are cut out or put in at their place in git's order, so a large
directory (a store's `runs/`, one entry a run) is neither parsed into Python entry by entry nor
handed back to `git mktree` whole. The same tree object as `mktree` makes of the edited listing
(tests/gitops/test_tree_bytes.py compares them).

Where a changed name stands, or goes, is found by one regular expression per name, matched from
the tree's start in C: it takes every entry whose key sorts before the name's (a key is the name,
a tree's with '/' after it), entry by entry as git wrote them (a mode, a space, the name up to its
NUL, the id), so it stops at an entry's start, never inside one (a name may hold a space, a
digit or any byte but NUL and '/'; an id any byte). No entry is looked at in Python. An edit of
many names at once scans the tree once in Python instead (`scanned`).
"""
from __future__ import annotations

import re
from collections.abc import Callable

Change = tuple[str, str, str]  # (mode, type, object id); mode "": the name is removed


def changes(directory: str, files: dict[str, dict[str, Change]], written: dict[str, str | None]) -> dict[str, Change]:
    """What changes in `directory` as a commit's trees are written deepest first: its own files
    (`files`: directory -> name -> change), and its subdirectories written just before (`written`:
    directory -> new tree id, None where it was emptied and leaves; a file of its name, where
    a directory became a file, stays)."""
    out = dict(files.get(directory, {}))
    for sub, oid in written.items():
        parent_dir, _, name = sub.rpartition("/")
        if sub and parent_dir == directory and (oid or name not in out):
            out[name] = ("40000", "tree", oid) if oid else ("", "", "")
    return out


def entry(mode: str, name: str, oid: str) -> bytes:
    """One tree entry as git writes it: `MODE NAME\\0` and the raw object id."""
    return f"{mode} {name}\0".encode("utf-8", "surrogateescape") + bytes.fromhex(oid)


def _key(mode: bytes, name: bytes) -> bytes:
    """git's order of tree entries: a tree's name sorts as if it ended in '/'."""
    return name + b"/" if mode == b"40000" else name


# A tree at least this large (about 1,000 entries) is edited as bytes by the git processes'
# plumbing rather than listed into Python and handed back to `git mktree` whole, and written
# uncompressed (statedir.gitops.loose).
LARGE = 32 << 10
FEW = 8  # names an edit finds each by its own expression; more: one scan of the tree


def edit(raw: bytes, width: int, changes: dict[str, Change]) -> bytes:
    """The tree `raw` (object ids of `width` bytes) with `changes` made: each name given is
    removed where it was and, unless removed, put in at its sorted place."""
    if len(changes) > FEW:
        return scanned(raw, width, changes)
    cuts: list[tuple[int, int]] = []  # (start, end) of an entry removed
    puts: list[tuple[int, bytes, bytes]] = []  # (where, key, entry) of an entry put in
    for name, (mode, _, oid) in changes.items():
        as_bytes = name.encode("utf-8", "surrogateescape")
        places, found = _places(raw, width, as_bytes)
        cuts.extend(found.values())
        if mode:  # its key is one of the two
            tree = mode == "40000"
            puts.append((places[tree], _key(mode.encode(), as_bytes), entry(mode, name, oid)))
    out: list[bytes] = []
    kept = 0
    events = sorted([(at, 0, key, data) for at, key, data in puts] + [(start, 1, b"", end) for start, end in cuts])
    for at, kind, _, what in events:  # at one place: what is put in, then what is cut out from there
        out.append(raw[kept:at])
        if kind == 0:
            out.append(what)  # type: ignore[arg-type]
            kept = at
        else:
            kept = what  # type: ignore[assignment]
    out.append(raw[kept:])
    return b"".join(out)


def tree_at(at: dict[str, bytes | None], directory: str, width: int,
            read: Callable[[bytes], bytes | None]) -> bytes | None:
    """The tree object at `directory` (b"" where no tree is), looked up name by name from the
    root's in `at` (under "") with `read` (a raw id -> that tree's bytes, None where it cannot be
    read: then None), each directory once: `at` keeps those looked up."""
    if directory not in at:
        parent, _, name = directory.rpartition("/")
        raw = tree_at(at, parent, width, read)
        sub = subtree(raw, width, name) if raw else None
        at[directory] = raw if raw is None else read(sub) if sub is not None else b""
    return at[directory]


def subtree(raw: bytes, width: int, name: str) -> bytes | None:
    """The raw id of the tree `name` in the tree `raw`, None where no tree has that name."""
    found = _places(raw, width, name.encode("utf-8", "surrogateescape"))[1].get(True)
    return raw[found[1] - width:found[1]] if found else None


def _places(raw: bytes, width: int, name: bytes) -> tuple[dict[bool, int], dict[bool, tuple[int, int]]]:
    """Where `name` stands or would go, as a file and as a tree ({False: at, True: at}: the first
    entry whose key is not before the name's, the name's with '/'), and the entries that hold it
    now ({False or True: (start, end)}). One scan in C to the file's place; the few entries
    whose keys lie between the two (the name with a byte below '/' after it) are stepped."""
    at = _before(raw, width, name)
    places, found = {False: at}, {}
    tree_key = name + b"/"
    while True:
        entry_ = _entry_at(raw, width, at)
        if entry_ is None or _key(entry_[0], entry_[1]) >= tree_key:
            break
        if entry_[1] == name and entry_[0] != b"40000":
            found[False] = (at, entry_[2])
        at = entry_[2]
    places[True] = at
    if entry_ is not None and entry_[0] == b"40000" and entry_[1] == name:
        found[True] = (at, entry_[2])
    return places, found


def _before(raw: bytes, width: int, key: bytes) -> int:
    """Where the first entry whose key is not before `key` starts (the tree's end if none)."""
    found = re.match(_entries_before(key, width), raw)
    return found.end() if found else 0


def _entries_before(key: bytes, width: int) -> bytes:
    """An expression taking entries, from the tree's start, while their key sorts before `key`."""
    def below(byte: int) -> bytes:  # one byte that sorts before `byte` (never NUL: no name holds it)
        return b"[\\x01-\\x%02x]" % (byte - 1) if byte > 1 else b"(?!)"

    file_names, tree_names = [], []  # names n with n < key, and with n + "/" < key
    for i, byte in enumerate(key):
        prefix = re.escape(key[:i])
        file_names += [prefix + below(byte) + b"[^\\0]*", prefix] if i else [below(byte) + b"[^\\0]*"]
        tree_names.append(prefix + below(byte) + b"[^\\0]*")
        if i and (byte > 0x2f or (byte == 0x2f and i + 1 < len(key))):  # n + "/" before key[:i + 1]...
            tree_names.append(prefix)
    tree = b"40000 (?:" + b"|".join(tree_names) + b")" if tree_names else b"(?!)"
    file = b"(?!40000 )[0-7]+ (?:" + b"|".join(file_names) + b")" if file_names else b"(?!)"
    return b"(?s)(?:(?:" + tree + b"|" + file + b")\\0.{%d})*" % width


def _entry_at(raw: bytes, width: int, at: int) -> tuple[bytes, bytes, int] | None:
    """(mode, name, end) of the entry starting at `at`, or None at the tree's end."""
    if at >= len(raw):
        return None
    space = raw.find(b" ", at)
    nul = raw.find(b"\0", space)
    if space < 0 or nul < 0:
        raise ValueError("not a tree object")
    return raw[at:space], raw[space + 1:nul], nul + 1 + width


def scanned(raw: bytes, width: int, changes: dict[str, Change]) -> bytes:
    """What `edit` gives, by one scan of the entries up to the last changed name (in Python)."""
    # where each changed name may stand now: as a file (its key is the name) or as a tree (the
    # name and '/'); an entry after both keys means the name is not there
    bounds = sorted(name.encode("utf-8", "surrogateescape") + b"/" for name in changes)
    inserts = sorted((_key(mode.encode(), name.encode("utf-8", "surrogateescape")), entry(mode, name, oid))
                     for name, (mode, _, oid) in changes.items() if mode)
    out: list[bytes] = []
    find, size, pos, kept, i, j = raw.find, len(raw), 0, 0, 0, 0  # kept: where the span still to copy begins
    while pos < size and (i < len(inserts) or j < len(bounds)):
        space = find(b" ", pos)
        nul = find(b"\0", space)
        if space < 0 or nul < 0:
            raise ValueError("not a tree object")
        end = nul + 1 + width
        name = raw[space + 1:nul]
        key = _key(raw[pos:space], name)
        while j < len(bounds) and bounds[j] < key:
            j += 1  # passed: that name is not in the tree
        while i < len(inserts) and inserts[i][0] < key:
            out += (raw[kept:pos], inserts[i][1])
            kept, i = pos, i + 1
        if name + b"/" in bounds[j:]:  # a changed name: cut out
            out.append(raw[kept:pos])
            kept = end
        pos = end
    out.append(raw[kept:])
    out.extend(data for _, data in inserts[i:])
    return b"".join(out)

"""A git tree object edited as its bytes (issue 37): the parent's listing is copied span by span
and only the changed names are cut out or put in at their place in git's order, so a large
directory (a store's `runs/`, one entry a run) is neither parsed into Python entry by entry nor
handed back to `git mktree` whole. The same tree object as `mktree` makes of the edited listing
(tests/gitops/test_tree_bytes.py compares them)."""
from __future__ import annotations

Change = tuple[str, str, str]  # (mode, type, object id); mode "": the name is removed


def entry(mode: str, name: str, oid: str) -> bytes:
    """One tree entry as git writes it: `MODE NAME\\0` and the raw object id."""
    return f"{mode} {name}\0".encode("utf-8", "surrogateescape") + bytes.fromhex(oid)


def _key(mode: bytes, name: bytes) -> bytes:
    """git's order of tree entries: a tree's name sorts as if it ended in '/'."""
    return name + b"/" if mode == b"40000" else name


def edit(raw: bytes, width: int, changes: dict[str, Change]) -> bytes:
    """The tree `raw` (object ids of `width` bytes) with `changes` made: each name given is
    removed where it was and, unless removed, put in at its sorted place."""
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

"""A ref's commit read from the git directory's own files, no git process: its loose file, else
`packed-refs` (where `git gc` packs it). `os` alone, no pathlib: statedir.gitops.git reads refs
through it, and so does a no-op sync's short path (statedir.sync.unmoved), before anything else loads."""
from __future__ import annotations

import os


def small_file(path: str) -> bytes | None:
    """A file's bytes, or None where it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def object_id(text: str) -> str | None:
    """`text` where it is an object id (40 lowercase hex digits), else None."""
    return text if len(text) == 40 and all(c in "0123456789abcdef" for c in text) else None


def commit(common: str, ref: str) -> str | None:
    """What the full ref name `ref` names in the git directory `common` (an object id), or None:
    no such ref, or one its files do not say plainly (git is asked then)."""
    loose = os.path.join(common, ref)
    if os.path.isfile(loose):
        return object_id((small_file(loose) or b"").strip().decode("ascii", "replace"))
    wanted = ref.encode()
    for line in (small_file(os.path.join(common, "packed-refs")) or b"").split(b"\n"):
        sha, _, name = line.partition(b" ")
        if name == wanted:
            return object_id(sha.decode("ascii", "replace"))
    return None

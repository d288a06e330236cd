"""Which statedir judges: its code, schemas and the templates it ships, by path, size and
modification time. A remembered verdict (`verify`'s, `validate`'s) names it, so an upgrade, or an
edit of an installed copy, is never taken for the statedir that judged before."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from statedir.files import schema


def key(salt: str) -> str:
    """The identity of the rules at hand, with `salt` (the remembering file's own format)."""
    digest = hashlib.sha256(salt.encode())
    for top in (Path(__file__).resolve().parent.parent, schema.data_dir("templates"), schema.data_dir("schemas")):
        for folder, dirs, names in os.walk(top):  # top down, each folder's own in name order
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(n for n in names if n.endswith((".py", ".yaml", ".json"))):
                info = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()

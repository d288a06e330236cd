"""A disposable parse cache: plain data of YAML files keyed by a digest of their bytes.

Parsing YAML with ruamel costs milliseconds per file; reading a file and hashing it costs
microseconds. The YAML files stay the only truth: an entry is used only when the file's
bytes still hash to it, and deleting `.cache/` loses nothing.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any


def digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


class ParseCache:
    """Entries {rel: [digest, canonical, plain]} kept in one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.dirty = False
        try:
            loaded = json.loads(path.read_bytes())
            self.entries: dict[str, list[Any]] = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            self.entries = {}

    def get(self, rel: str, raw: bytes) -> tuple[Any, bool] | None:
        entry = self.entries.get(rel)
        if isinstance(entry, list) and len(entry) == 3 and entry[0] == digest(raw):
            return entry[2], bool(entry[1])
        return None

    def put(self, rel: str, raw: bytes, plain: Any, canonical: bool) -> None:
        self.entries[rel] = [digest(raw), canonical, plain]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written is just slower
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.entries, separators=(",", ":")))
            os.replace(tmp, self.path)
        self.dirty = False

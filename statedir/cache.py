"""A disposable parse cache: plain data of YAML files, addressed by a digest of their bytes.

Parsing YAML with ruamel costs milliseconds per file; reading a file and hashing it costs
microseconds. Entries are addressed by content (like git's objects), so a file's entry is
used only while its bytes still hash to it, identical files share one entry, and a command
reads only the entries of the files it reads. The YAML files stay the only truth: deleting
the cache directory loses nothing.
"""
from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:  # the builtin module: importing hashlib would load OpenSSL, a few ms on every command
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import blake2b


def digest(raw: bytes) -> str:
    return blake2b(raw, digest_size=20).hexdigest()


class ParseCache:
    """Entries `<dir>/<2 hex>/<rest>.json` holding [schema, canonical, plain] of valid files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._prefix = f"{directory}{os.sep}"

    def _path(self, raw: bytes) -> str:
        key = digest(raw)  # a plain string path: this runs once per file a command reads
        return f"{self._prefix}{key[:2]}{os.sep}{key[2:]}.json"

    def get(self, kind: str, raw: bytes) -> tuple[Any, bool] | None:
        """(plain, canonical) of bytes already parsed and found valid as `kind`, else None."""
        try:
            with open(self._path(raw), "rb") as file:
                entry = json.loads(file.read())
        except (OSError, ValueError):
            return None
        if isinstance(entry, list) and len(entry) == 3 and entry[0] == kind:
            return entry[2], bool(entry[1])
        return None

    def knows(self, kind: str, raw: bytes) -> bool:
        """Whether these bytes were already found valid as `kind` (reads the entry's head only)."""
        head = f"[{json.dumps(kind)},".encode()
        try:
            with open(self._path(raw), "rb") as entry:
                return entry.read(len(head)) == head
        except OSError:
            return False

    def through(self, kind: str, raw: bytes, parse: Callable[[], tuple[Any, bool]]) -> tuple[Any, bool]:
        """(plain, canonical) of `raw` from the cache, else from `parse()` (which parses and
        validates, or raises), then remembered."""
        hit = self.get(kind, raw)
        if hit is None:
            hit = parse()
            self.put(kind, raw, *hit)
        return hit

    def put(self, kind: str, raw: bytes, plain: Any, canonical: bool) -> None:
        path = Path(self._path(raw))
        with contextlib.suppress(OSError):  # a cache that cannot be written is just slower
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps([kind, canonical, plain], separators=(",", ":")))
            os.replace(tmp, path)

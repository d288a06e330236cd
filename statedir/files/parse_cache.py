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

    MEMORY_ENTRIES = 4096  # a long-lived handle (the Python API) keeps this many entries' text

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._prefix = f"{directory}{os.sep}"
        self._memory: dict[str, bytes] = {}  # entry path -> its JSON text, as on disk

    def _entry(self, path: str) -> bytes:
        text = self._memory.get(path)
        if text is None:
            with open(path, "rb") as file:
                text = file.read()
            self._remember(path, text)
        return text

    def _remember(self, path: str, text: bytes) -> None:
        if len(self._memory) >= self.MEMORY_ENTRIES:
            self._memory.clear()
        self._memory[path] = text

    def _path(self, raw: bytes) -> str:
        key = digest(raw)  # a plain string path: this runs once per file a command reads
        return f"{self._prefix}{key[:2]}{os.sep}{key[2:]}.json"

    def get(self, kind: str, raw: bytes) -> tuple[Any, bool] | None:
        """(plain, canonical) of bytes already parsed and found valid as `kind`, else None."""
        try:
            entry = json.loads(self._entry(self._path(raw)))  # parsed afresh: callers may change it
        except (OSError, ValueError):
            return None
        if isinstance(entry, list) and len(entry) == 3 and entry[0] == kind:
            return entry[2], bool(entry[1])
        return None

    def knows(self, kind: str, raw: bytes) -> bool:
        """Whether these bytes were already found valid as `kind` (reads the entry's head only)."""
        head = f"[{json.dumps(kind)},".encode()
        path = self._path(raw)
        if path in self._memory:
            return self._memory[path].startswith(head)
        try:
            with open(path, "rb") as entry:
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
        name = self._path(raw)
        text = json.dumps([kind, canonical, plain], separators=(",", ":")).encode()
        self._remember(name, text)
        path = Path(name)
        with contextlib.suppress(OSError):  # a cache that cannot be written is just slower
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(text)
            os.replace(tmp, path)

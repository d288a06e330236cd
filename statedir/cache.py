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

    def _path(self, raw: bytes) -> Path:
        key = digest(raw)
        return self.directory / key[:2] / f"{key[2:]}.json"

    def get(self, kind: str, raw: bytes) -> tuple[Any, bool] | None:
        """(plain, canonical) of bytes already parsed and found valid as `kind`, else None."""
        try:
            entry = json.loads(self._path(raw).read_bytes())
        except (OSError, ValueError):
            return None
        if isinstance(entry, list) and len(entry) == 3 and entry[0] == kind:
            return entry[2], bool(entry[1])
        return None

    def through(self, kind: str, raw: bytes, parse: Callable[[], tuple[Any, bool]]) -> tuple[Any, bool]:
        """(plain, canonical) of `raw` from the cache, else from `parse()` (which parses and
        validates, or raises), then remembered."""
        hit = self.get(kind, raw)
        if hit is None:
            hit = parse()
            self.put(kind, raw, *hit)
        return hit

    def put(self, kind: str, raw: bytes, plain: Any, canonical: bool) -> None:
        path = self._path(raw)
        with contextlib.suppress(OSError):  # a cache that cannot be written is just slower
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps([kind, canonical, plain], separators=(",", ":")))
            os.replace(tmp, path)

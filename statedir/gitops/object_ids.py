"""The hashes git names things by: SHA-1 (SHA-256 in a repository made so) of an object, or of
the index file's own bytes.

Small inputs (a transition's few files, a small repository's index) are hashed by CPython's own
SHA-1 module: hashlib loads OpenSSL's libcrypto first, about 3 ms on every command, for
hashing that takes microseconds. Larger ones go to hashlib, several times faster per byte.
"""
# Lazy imports: CPython's own SHA-1 (_sha1) at the first id, hashlib (OpenSSL, about 3 ms) only for inputs over 64 KiB
#   and SHA-256 repositories.
from __future__ import annotations

from typing import Any

_SMALL = 1 << 16  # bytes: below this the builtin SHA-1 is done before OpenSSL would have loaded


def hashed(data: bytes, width: int, size: int | None = None) -> Any:
    """A hash object over `data` for ids `width` bytes long (20: SHA-1, 32: SHA-256); `size`
    is how many bytes it will have been given in all, where more are to follow by update()."""
    if width == 20 and (len(data) if size is None else size) < _SMALL:
        try:
            from _sha1 import sha1
        except ImportError:  # pragma: no cover - a Python without CPython's builtin hashes
            pass
        else:
            return sha1(data)
    import hashlib

    return (hashlib.sha1 if width == 20 else hashlib.sha256)(data)


def blob_id(data: bytes, hex_width: int) -> str:
    """The id (hex) git gives `data` as a blob, in a repository whose ids are `hex_width` hex digits
    long (40: SHA-1, 64: SHA-256): callers have one of its ids at hand and pass its length."""
    return hashed(b"blob %d\0" % len(data) + data, hex_width // 2).hexdigest()

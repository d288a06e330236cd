"""Request ids: the identity every transition carries (its log entries, its passports, the
`Statedir-Request-Id` trailer), so no two transitions ever merge into one entry or one commit.

An id is a ULID: 26 characters of Crockford base32, a millisecond timestamp then 80 random
bits. Ids sort by the time they were made, and within one process strictly in the order they
were made (a second id in the same millisecond is the first plus one), so a merge that sorts
entries by id keeps each side's entries in the order that side wrote them.
"""
from __future__ import annotations

import _thread
import os
import re
import time

TRAILER = "Statedir-Request-Id"
PATTERN = "^[0-9A-HJKMNP-TV-Z]{26}$"
ID_RE = re.compile(PATTERN)
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_lock = _thread.allocate_lock()  # threading.Lock itself, without importing threading
_last = (0, 0)  # (milliseconds, random part) of the last id this process made


def _encode(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        value, digit = divmod(value, 32)
        out.append(_ALPHABET[digit])
    return "".join(reversed(out))


def new() -> str:
    """A fresh id, later than every id this process made before."""
    global _last
    with _lock:
        ms = time.time_ns() // 1_000_000
        last_ms, last_random = _last
        if ms <= last_ms and last_random + 1 < 1 << _RANDOM_BITS:
            ms, random = last_ms, last_random + 1  # the same millisecond (or a clock set back)
        else:
            random = int.from_bytes(os.urandom(_RANDOM_BITS // 8), "big")
        _last = (ms, random)
    return _encode(ms, 10) + _encode(random, 16)


"""Lists that only grow (rule `grow`: the handoff bus's lists, a stage's outputs): both sides'
appends kept, each entry once, though the entries carry no time to order them by."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any


def grown(base: list[Any], ours: list[Any], theirs: list[Any], identity: Callable[[Any], str]) -> list[Any] | None:
    """Ours, then the entries theirs added that ours lacks, in theirs' order; None where a side
    did more than add (an entry of the base gone: the caller's `conflict` decides).

    An entry added on both sides is kept once. Ours is not always base + what ours appended:
    an earlier merge may have put another machine's entries before the base's, so growth is
    judged by what each side holds, not by where."""
    held = [Counter(identity(item) for item in side) for side in (base, ours, theirs)]
    if any(held[1][key] < n or held[2][key] < n for key, n in held[0].items()):
        return None
    merged, have = list(ours), held[1]
    for item in theirs:
        key = identity(item)
        if have[key] > 0:
            have[key] -= 1  # ours holds it already (from the base, or appended on both sides)
        else:
            merged.append(item)
    return merged

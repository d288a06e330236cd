"""What statedir itself last committed: a disposable record (in the git directory) that spares
asking git whether the files a transition touches still match HEAD.

It is trusted only while HEAD is the commit it names; any other commit (the user's, another
clone's) sends the check to git. Whole files are known by their blob id, logs by their length.
"""
from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statedir.store.disk import Disk

NAME = "committed.json"
MOST = 4096  # paths remembered at the most; past that the record starts again from one commit


def recall(store: Disk, head: str | None) -> dict[str, Any]:
    """The remembered {git path: [blob id or None, size] or None (absent)} at `head`, or {}."""
    if head is None:
        return {}
    try:
        record = json.loads((store.cache_dir / NAME).read_bytes())
        return record["paths"] if record.get("head") == head and isinstance(record.get("paths"), dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def remember(store: Disk, parent: str | None, head: str, paths: dict[str, Any]) -> None:
    """Record what commit `head` (made on `parent`) holds at `paths`; best effort."""
    known = recall(store, parent)
    if len(known) + len(paths) > MOST:
        known = {}
    known.update(paths)
    target = store.cache_dir / NAME
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{NAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"head": head, "paths": known}))
        os.replace(tmp, target)

"""This clone's own acknowledgements: a record under the git directory (never in the tracked
tree, so no remote can write it) of each acknowledgement statedir made here, binding its request
id to the findings it names. An entry of acknowledged.yaml counts on this clone when this record
holds its request id with its finding, so a remote that copies a request id for another finding,
or acknowledges its own forgery, silences nothing here."""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from statedir.gitops import git
from statedir.store.store import Store

Key = tuple[str, str, str | None]


def path(store: Store) -> Path:
    return git.common_dir(git.git_dir(store.worktree)) / "statedir" / "acknowledged.jsonl"


def add(store: Store, request_id: str, keys: Iterable[Key]) -> None:
    """Record one acknowledgement (written before its commit: a request id no commit carries
    acknowledges nothing). One line, appended and flushed to disk; a torn last line is skipped."""
    line = json.dumps({"store": store.prefix, "request_id": request_id,
                       "findings": [list(k) for k in sorted(keys, key=str)]}, sort_keys=True) + "\n"
    target = path(store)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def load(store: Store) -> dict[str, set[Key]]:
    """request id -> the finding keys this clone acknowledged under it (this store's only)."""
    try:
        text = path(store).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, set[Key]] = {}
    for line in text.splitlines():
        record = _record(line)
        if record is not None and record.get("store") == store.prefix:
            out.setdefault(record["request_id"], set()).update(
                (str(f[0]), str(f[1]), None if f[2] is None else str(f[2])) for f in record["findings"])
    return out


def _record(line: str) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    ok = (isinstance(record, dict) and isinstance(record.get("request_id"), str)
          and isinstance(record.get("findings"), list)
          and all(isinstance(f, list) and len(f) == 3 for f in record["findings"]))
    return record if ok else None

"""Moving logs of the layout before segments (`history/<log>.yaml`) into day segments.

`doctor` reports every legacy log as fixable; `doctor --fix` moves them all in one commit
through the one write path (`plan` + `fix`). verify accepts such a commit exactly when every
log it touched holds the same entries (as a multiset) before and after, with no legacy file
left (`check`)."""
from __future__ import annotations

import collections
import json
from typing import Any

from statedir.errors import StatedirError, ValidationFailed
from statedir.gitops import commit_message
from statedir.store import layout, run_logs
from statedir.store.store import Store
from statedir.store.write import persist

Finding = dict[str, Any]


def legacy_logs(store: Store) -> list[str]:
    """Every legacy log file of the store (store-relative), sorted."""
    found = []
    for run_id in store.run_ids():
        base = store.run_dir(run_id)
        folder = store.path(f"{base}/history")
        if not folder.is_dir() or folder.is_symlink():
            continue
        found += [f"{base}/history/{p.name}" for p in folder.iterdir()
                  if p.is_file() and run_logs.LEGACY_RE.match(f"{base}/history/{p.name}")]
    return sorted(found)


def plan(store: Store, legacy: list[str]) -> tuple[dict[str, bytes], list[str]]:
    """(segment path -> its whole new bytes, legacy paths to remove) for moving `legacy`."""
    writes: dict[str, bytes] = {}
    for rel in legacy:
        owner = run_logs.log_of(rel)
        assert owner is not None
        base, name = owner
        old = run_logs.read_file(store, rel, name)
        dated = [p for p in run_logs.files(store, base, name) if p != rel]
        existing = {p: run_logs.read_file(store, p, name) for p in dated}
        scoped = "../" + layout.own_ref(rel, store.read_bytes(rel))  # the run's compiled schema, one level up
        for path, entries in run_logs.migration(base, name, old, existing, run_logs.today()).items():
            ref = layout.own_ref(path, store.read_bytes(path)) if path in existing else scoped
            writes[path] = run_logs.render(entries, ref)
    return writes, legacy


def findings(store: Store, actor: str, timeout: float | None) -> list[Finding]:
    """One finding per legacy log; the first carries the repair that moves them all."""
    legacy = legacy_logs(store)
    if not legacy:
        return []

    def fix() -> None:
        with store.locked(timeout):
            current = legacy_logs(store)
            if not current:
                return
            writes, removes = plan(store, current)
            logs = "log" if len(current) == 1 else "logs"
            message = commit_message.message(f"doctor: move {len(current)} {logs} into day segments", "-", actor,
                                             "doctor")
            persist(store, writes=writes, removes=removes, message=message, author=actor)
    return [{"kind": "legacy_log", "file": rel,
             "message": f"{rel} is a log of the layout before day segments (read first, never appended to)",
             "fix": "move every legacy log's entries into day segments history/<log>/<day>.yaml (one commit for all)",
             "_repair": fix if i == 0 else None} for i, rel in enumerate(legacy)]


def check(reader: Any, commit: Any) -> dict[str, bytes | None]:
    """verify's replay of a doctor commit's log files: path -> the bytes it must hold (None:
    removed), when the move kept every touched log's entries; raises ValidationFailed if not."""
    touched = {run_logs.log_of(rel) for rel in commit.changed if run_logs.log_of(rel)}
    out: dict[str, bytes | None] = {}
    listings: dict[str, tuple[dict[str, str], dict[str, str]]] = {}  # run folder -> (before, after)
    for base, name in sorted(o for o in touched if o is not None):
        if base not in listings:
            before = reader.files(commit.parent, base) if commit.parent else {}
            listings[base] = (before, reader.files(commit.sha, base))
        before, after = listings[base]
        if run_logs.legacy(base, name) in after:
            raise ValidationFailed(f"doctor left {run_logs.legacy(base, name)} in place")
        try:
            old = _entries(reader, before, base, name)
            new = _entries(reader, after, base, name)
        except StatedirError as exc:
            raise ValidationFailed(f"a log doctor moved cannot be read: {exc.message}") from None
        if old != new:
            lost, gained = sum((old - new).values()), sum((new - old).values())
            raise ValidationFailed(f"doctor's move of the {name} log of {base} changed its entries "
                                   f"({lost} lost, {gained} added)")
    for rel, (status, _, new_id) in commit.changed.items():
        if run_logs.log_of(rel):
            out[rel] = None if status == "D" else reader.raw(new_id)
    return out


def _entries(reader: Any, files: dict[str, str], base: str, name: str) -> collections.Counter[str]:
    return collections.Counter(json.dumps(e, sort_keys=True) for rel in run_logs.ordered(files, base, name)
                               for e in reader.plain(rel, files[rel]))

"""Which acknowledgements count here. An entry of acknowledged.yaml silences its finding only
(a) on the clone that made it (statedir.history.ack_local holds its request id with that very
finding), or (b) where the acknowledgement commit that records it is signed by a key of an actor
signers.yaml names for acknowledging (`acknowledgers`, as trusted at the commit's parent), never
because a remote's file says so. One that does not count leaves its finding standing and is
listed with the reason."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from statedir.errors import StatedirError
from statedir.files.signers_file import FILE as SIGNERS
from statedir.history import ack_local, acknowledgements
from statedir.history.signatures import Auditor
from statedir.history.snapshot import CommitReader
from statedir.store.recorded import Commit

Key = tuple[str, str, str | None]
_NO_ACKNOWLEDGER = (f"{SIGNERS} names no acknowledging actor with a key, so only the clone that made an "
                    "acknowledgement counts it")


class _Signed:
    """The acknowledgement commits signed by an acknowledger: request id -> the findings they name."""

    def __init__(self, auditor: Auditor, history: Callable[[], Sequence[Commit]]) -> None:
        self.counted: dict[str, set[Key]] = {}
        self.why: dict[str, str] = {}
        for commit in history():
            rid = (commit.request or {}).get("request_id")
            if len(commit.parents) != 1 or commit.action != acknowledgements.ACTION or not isinstance(rid, str):
                continue
            why = self._why_not(auditor, commit)
            if why is None:
                try:
                    named = acknowledgements.keys(acknowledgements.entries_of(commit.request, commit.actor))
                except StatedirError:
                    continue
                self.counted.setdefault(rid, set()).update(named)
            else:
                self.why[rid] = f"{commit.sha[:10]}: {why}"

    @staticmethod
    def _why_not(auditor: Auditor, commit: Commit) -> str | None:
        trusted = auditor.trusted_at(commit.parent)
        keys = trusted.acknowledging_keys() if trusted else set()
        if not keys:
            return _NO_ACKNOWLEDGER
        assert trusted is not None
        rule = f"an acknowledgement counts on other clones only when signed by an acknowledger " \
               f"({', '.join(trusted.acknowledgers)})"
        found = auditor.signed(commit.sha, keys, trusted, rule)
        return str(found[0]["message"]) if found else None


def standing(reader: CommitReader, auditor: Auditor, findings: list[dict[str, Any]],
             history: Callable[[], Sequence[Commit]]) -> tuple[list[Any], list[Any], list[Any]]:
    """(the findings left, those acknowledged here, the acknowledgements that do not count here:
    [{commit, kind, file, by, request_id, reason}]); `history` gives acknowledged.yaml's commits."""
    entries = acknowledgements.entries_at_head(reader)
    if not entries or not findings:
        return findings, [], []
    by_key: dict[Key, list[dict[str, Any]]] = {}
    for entry in entries:
        by_key.setdefault(acknowledgements.key(entry), []).append(entry)
    local = ack_local.load(reader.store)
    signed: _Signed | None = None
    left, acknowledged, not_counted = [], [], []
    for finding in findings:
        named = by_key.get(acknowledgements.key(finding), [])
        if not named:
            left.append(finding)
            continue
        if any(acknowledgements.key(e) in local.get(str(e.get("request_id")), ()) for e in named):
            acknowledged.append(finding)
            continue
        if signed is None:  # a store with no signers.yaml names no acknowledger: no log to read
            signed = _Signed(auditor, history if reader.objects.read(reader.spec("HEAD", SIGNERS)) else list)
        if any(acknowledgements.key(e) in signed.counted.get(str(e.get("request_id")), ()) for e in named):
            acknowledged.append(finding)
            continue
        left.append(finding)
        last = named[-1]
        rid = str(last.get("request_id"))
        reason = signed.why.get(rid) or (_NO_ACKNOWLEDGER if not signed.counted and not signed.why else
                                         "no acknowledgement commit signed by an acknowledger names this finding")
        not_counted.append({"commit": finding["commit"], "kind": finding["kind"], "file": finding.get("file"),
                            "by": last.get("by"), "request_id": last.get("request_id"),
                            "reason": f"acknowledged on another clone (this clone has no record of it): {reason}"})
    return left, acknowledged, not_counted

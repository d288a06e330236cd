"""The label each content has now, in the records written before a merge renumbered it.

Two machines that register the next version of one series both take the same label; the merge
(statedir.merge.versions) keeps both and moves the later one to the next free label. The logs are
append-only and the commit messages are history, so an entry written before the merge still says
`material review_reports -> review_v1` for the content now labelled `review_v2`. Each passport
keeps the request id of the registration that made it: a record of that request names the
passport's label as it is now, and says which label it was written with. Pure functions."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_MADE = re.compile(r"^(?P<head>.* -> )(?P<label>[A-Za-z0-9_.-]+)$")


def labels(passports: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """request id -> the label of the passport that registration made."""
    return {str(p["request_id"]): label for label, p in passports.items()
            if isinstance(p, Mapping) and isinstance(p.get("request_id"), str)}


def entry(item: dict[str, Any], now: Mapping[str, str], request_id: str | None = None) -> dict[str, Any]:
    """A record (a log entry, a `log` row) as it reads with the labels of `now` (labels()): where its
    request made a version that now has another label, its summary names the new one and the one
    it was written with. Anything else is returned as it is."""
    rid = request_id or item.get("request_id")
    label = now.get(rid) if isinstance(rid, str) else None
    summary = item.get("summary")
    found = _MADE.match(summary) if label and isinstance(summary, str) else None
    if found is None or found["label"] == label:
        return item
    return {**item, "summary": f"{found['head']}{label} (renumbered from {found['label']} by a merge)"}


def entries(items: list[dict[str, Any]], now: Mapping[str, str]) -> list[dict[str, Any]]:
    return [entry(item, now) if isinstance(item, dict) else item for item in items] if now else items


def histories(logs: Mapping[str, list[dict[str, Any]]],
              passports: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every log of a run read with the labels its passports have."""
    now = labels(passports)
    return {name: entries(items, now) for name, items in logs.items()}

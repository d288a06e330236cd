"""A semantic diff of two `show` documents: dotted paths, old and new values.

The tree comparison is deepdiff's (well kept, handles type changes and list insertions);
this module only shapes the documents so records are matched by their ids, and flattens
deepdiff's report into `{path, from, to}` rows.
"""
from __future__ import annotations

import json
from typing import Any

from deepdiff import DeepDiff
from deepdiff.helper import notpresent

# Lists of records whose items carry one of these keys are compared as mappings keyed by it,
# so a record is matched by its id, not by its position. Append-only logs stay lists: an
# entry's position is its identity there.
ID_KEYS = ("id", "version_label", "source_family")


def keyed(value: Any) -> Any:
    """The document with lists of id-carrying records turned into mappings by id."""
    if isinstance(value, dict):
        return {k: keyed(v) for k, v in value.items()}
    if isinstance(value, list):
        for key in ID_KEYS:
            ids = [item.get(key) for item in value if isinstance(item, dict)]
            if value and len(ids) == len(value) and all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids):
                return {item[key]: keyed(item) for item in value}
        return [keyed(item) for item in value]
    return value


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """[{path, from, to, change}] from `old` to `new`; added and removed values are None on
    their missing side, `change` says which (added, removed, changed). Paths are dotted keys
    into the document (`stages.2.5.status`)."""
    report = DeepDiff(keyed(old), keyed(new), view="tree", verbose_level=2)
    rows = []
    for kind in report:
        for item in report[kind]:
            path = item.path(output_format="list")
            before = None if item.t1 is notpresent else item.t1
            after = None if item.t2 is notpresent else item.t2
            change = "added" if kind.endswith("_added") else "removed" if kind.endswith("_removed") else "changed"
            rows.append({"path": ".".join(str(p) for p in path), "from": before, "to": after, "change": change,
                         "_key": path})
    rows.sort(key=lambda r: [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in r["_key"]])
    for row in rows:
        del row["_key"]
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    """One line a change: `~ path: old -> new`, `+ path: new`, `- path: old`."""
    def show(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        return text if len(text) <= 100 else text[:97] + "..."

    lines = []
    for row in rows:
        if row["change"] == "added":
            lines.append(f"+ {row['path']}: {show(row['to'])}")
        elif row["change"] == "removed":
            lines.append(f"- {row['path']}: {show(row['from'])}")
        else:
            lines.append(f"~ {row['path']}: {show(row['from'])} -> {show(row['to'])}")
    return "\n".join(lines)

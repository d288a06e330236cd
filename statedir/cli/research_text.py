"""`statedir research` at a terminal: its JSON as a person reads it (a pipe, and --json, get the JSON
itself, which skills parse): a record as aligned fields, a list as one line a record."""
from __future__ import annotations

import json
from typing import Any

TITLES = ("name", "question", "statement", "summary", "title", "skill", "description")  # a record's words


def readable(result: Any) -> str:
    if isinstance(result, list):
        return "\n".join(_line(item) for item in result) if result else "(none)"
    if not isinstance(result, dict):
        return str(result)
    lines = []
    if result.get("commit"):
        lines.append(f"ok  {result.get('id') or 'recorded'}  [{str(result['commit'])[:10]}]")
    shown = {k: v for k, v in result.items() if k != "commit"}
    width = max((len(k) for k in shown), default=0)
    for key, value in shown.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):  # records: one line each
            lines.append(f"  {key.ljust(width)}  ({len(value)})")
            lines += [f"    {_line(item)}" for item in value]
        else:
            lines.append(f"  {key.ljust(width)}  {_value(value)}")
    return "\n".join(lines)


def _line(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    title = next((str(item[k]) for k in TITLES if item.get(k)), "")
    rest = "  ".join(str(item[k]) for k in ("status", "confidence", "stance") if item.get(k))
    return "  ".join(part for part in (str(item.get("id", "")), title, rest) if part)


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(map(str, value)) or "-"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)

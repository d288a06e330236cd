"""Three-way merge of one YAML document by the `x-merge` rules its schema gives each field.

Rules (the keyword's values):
- `by-key`: a mapping merged key by key, each value by its own schema's rule (`properties`,
  else `additionalProperties`);
- `immutable`: never changes once written: both sides adding different values is a conflict;
- `conflict`: one side's change is taken; two different changes are a conflict;
- `max`: the larger of the two (counters of moves, versions, UTC timestamps: the same move
  made on two machines is one move of the run, completed when the later one completed);
- `min`: the smaller of the two (the same move started on two machines started with the earlier);
- `furthest`: the status further along the moves (the template's status moves, or the field's
  `x-merge-order`); two statuses neither of which follows from the other are a conflict;
- `union-by-id`: a list of records, the union of both sides by identity (canonical JSON of
  the whole record), each once, in time order (`at`, then `request_id`: ids sort by when
  they were made), ties by identity;
- `grow`: a value that only grows: a list no side took an entry from is ours, then what
  theirs added that ours lacks, each entry once (statedir.merge.lists); a mapping merges key
  by key; anything else (a list an entry left, a string) as `conflict`.

A rule never silently picks one side of two different changes: where it cannot decide, the
field is reported in `Conflicts` and the caller refuses the merge.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from statedir.merge import lists

RULES = ("by-key", "immutable", "conflict", "max", "min", "furthest", "union-by-id", "grow")
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<absent>"})()


@dataclass
class Conflict:
    """One field the rules cannot merge: its dotted path, the rule, and the three values."""

    path: str
    rule: str
    ours: Any
    theirs: Any
    base: Any = MISSING

    def as_dict(self) -> dict[str, Any]:
        def shown(value: Any) -> Any:
            return None if value is MISSING else value
        return {"field": self.path, "rule": self.rule, "ours": shown(self.ours), "theirs": shown(self.theirs),
                "base": shown(self.base)}


@dataclass
class Context:
    """What rules need beyond the schema: the order of statuses (a `furthest` field)."""

    root: dict[str, Any]
    further: Callable[[Any, Any], bool] | None = None  # further(a, b): a is reachable from b
    conflicts: list[Conflict] = field(default_factory=list)


def identity(record: Any) -> str:
    """A record's identity: its whole content as canonical JSON (sorted keys, no spaces)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def resolve(node: Any, root: dict[str, Any]) -> dict[str, Any]:
    """A schema node with a local `$ref` followed."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        node = merged
    return node if isinstance(node, dict) else {}


def rule_of(node: dict[str, Any]) -> str:
    rule = node.get("x-merge", "conflict")
    return rule if rule in RULES else "conflict"


def child(node: dict[str, Any], key: str, root: dict[str, Any]) -> dict[str, Any]:
    """The schema of `key` in a mapping node: its property, else the additionalProperties."""
    props = node.get("properties")
    if isinstance(props, dict) and key in props:
        return resolve(props[key], root)
    branches = [resolve(branch, root) for branch in node.get("anyOf", [])]  # an object or null (an open
    for branch in branches:  # checkpoint), a string, list or mapping (a bus value): the object's
        if isinstance(branch.get("properties"), dict) and key in branch["properties"]:
            return resolve(branch["properties"][key], root)
    extra = next((n.get("additionalProperties") for n in (node, *branches)
                  if isinstance(n.get("additionalProperties"), dict)), None)
    return resolve(extra, root) if isinstance(extra, dict) else {"x-merge": "conflict"}


def merge(base: Any, ours: Any, theirs: Any, node: dict[str, Any], ctx: Context, path: str = "") -> Any:
    """The merged value (MISSING for a key both sides agree to drop); conflicts go to ctx."""
    rule = rule_of(node)
    if _same(ours, theirs):
        return ours
    if rule == "union-by-id" and isinstance(ours, list | type(None)) and isinstance(theirs, list | type(None)):
        return union(ours or [], theirs or [])
    if rule == "immutable":
        if base is MISSING and (ours is MISSING or theirs is MISSING):
            return theirs if ours is MISSING else ours  # written on one side only
        ctx.conflicts.append(Conflict(path or "$", rule, ours, theirs, base))
        return ours
    if _same(base, ours):
        return theirs
    if _same(base, theirs):
        return ours
    if rule in ("by-key", "grow") and isinstance(ours, dict) and isinstance(theirs, dict):
        old = base if isinstance(base, dict) else {}
        out: dict[str, Any] = {}
        for key in [*ours, *(k for k in theirs if k not in ours)]:
            value = merge(old.get(key, MISSING), ours.get(key, MISSING), theirs.get(key, MISSING),
                          child(node, key, ctx.root), ctx, f"{path}.{key}" if path else key)
            if value is not MISSING:
                out[key] = value
        return out
    if rule == "grow" and isinstance(ours, list) and isinstance(theirs, list):
        grown = lists.grown(base if isinstance(base, list) else [], ours, theirs, identity)
        if grown is not None:
            return grown
    if rule in ("max", "min") and _comparable(ours, theirs):
        return max(ours, theirs) if rule == "max" else min(ours, theirs)
    if rule == "furthest" and ours is not MISSING and theirs is not MISSING:
        order = node.get("x-merge-order")
        if isinstance(order, list) and ours in order and theirs in order:
            return ours if order.index(ours) > order.index(theirs) else theirs
        if ctx.further is not None:
            if ctx.further(ours, theirs) and not ctx.further(theirs, ours):
                return ours
            if ctx.further(theirs, ours) and not ctx.further(ours, theirs):
                return theirs
    ctx.conflicts.append(Conflict(path or "$", rule, ours, theirs, base))
    return ours


def union(ours: list[Any], theirs: list[Any]) -> list[Any]:
    """Both lists' records, each once by identity, in time order (`at`), ties by identity."""
    seen: dict[str, Any] = {}
    for record in [*ours, *theirs]:
        seen.setdefault(identity(record), record)
    return [seen[key] for key in sorted(seen, key=lambda k: (_text(seen[k], "at"), _text(seen[k], "request_id"), k))]


def _text(record: Any, key: str) -> str:
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, str) else ""


def _same(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    return identity(a) == identity(b)


def _comparable(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    return isinstance(a, numbers) and isinstance(b, numbers) or isinstance(a, str) and isinstance(b, str)


def further_by_moves(moves: dict[str, list[str]]) -> Callable[[Any, Any], bool]:
    """further(a, b): status `a` can be reached from `b` by the template's moves."""
    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in moves.get(todo.pop(), []):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cache: dict[str, set[str]] = {}

    def further(a: Any, b: Any) -> bool:
        if not isinstance(a, str) or not isinstance(b, str):
            return False
        if b not in cache:
            cache[b] = reachable(b)
        return a in cache[b]
    return further


def walk_missing(schema: dict[str, Any], where: str = "$") -> list[str]:
    """Every property in a schema (at any depth) that carries no `x-merge` rule."""
    out: list[str] = []

    def visit(node: Any, at: str) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                for name, sub in props.items():
                    if not isinstance(sub, dict) or sub.get("x-merge") not in RULES:
                        out.append(f"{at}.{name}")
            for key, value in node.items():
                visit(value, f"{at}.{key}" if key != "properties" else at)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                visit(value, f"{at}[{i}]")
    visit(schema, where)
    return out

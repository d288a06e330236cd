"""Compiled validity checks for the JSON Schema subset statedir's schemas use.

`compile_schema(schema)` turns a schema into one Python predicate, built once per process; it
answers only "valid or not". When it says no, `schema.validate` asks jsonschema for the
messages, so the fast path never needs jsonschema's import. The tests check both agree.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]
TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or isinstance(v, float) and v.is_integer(),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs", "default", "examples", "$comment",
               "x-merge", "x-merge-order"}  # the merge driver's rules (statedir.merge.rules): no constraint


class Unsupported(Exception):
    """The schema uses a keyword this compiler does not know; use jsonschema instead."""


def _equal(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0 but True != 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) in (int, float) and type(b) in (int, float) and a == b or \
        type(a) is type(b) and a == b


def compile_schema(root: dict[str, Any]) -> Check:
    refs: dict[str, Check] = {}

    def ref(pointer: str) -> Check:
        if pointer not in refs:
            refs[pointer] = lambda v: False  # placeholder for recursion
            node: Any = root
            for part in pointer.removeprefix("#/").split("/"):
                node = node[part]
            compiled = build(node)
            refs[pointer] = compiled
        return lambda v: refs[pointer](v)

    def build(s: Any) -> Check:
        if s is True or s == {}:
            return lambda v: True
        if not isinstance(s, dict):
            raise Unsupported(repr(s))
        checks: list[Check] = []
        for key, arg in s.items():
            if key in ANNOTATIONS:
                continue
            checks.append(keyword(key, arg, s))
        return lambda v: all(c(v) for c in checks)

    def keyword(key: str, arg: Any, s: dict[str, Any]) -> Check:
        if key == "type":
            names = arg if isinstance(arg, list) else [arg]
            tests = [TYPES[n] for n in names]
            return lambda v: any(t(v) for t in tests)
        if key == "$ref":
            return ref(arg)
        if key == "const":
            return lambda v: _equal(v, arg)
        if key == "enum":
            return lambda v: any(_equal(v, e) for e in arg)
        if key == "pattern":
            rx = re.compile(arg)
            return lambda v: not isinstance(v, str) or rx.search(v) is not None
        if key in ("minimum", "exclusiveMinimum", "maximum"):
            op = {"minimum": lambda v: v >= arg, "exclusiveMinimum": lambda v: v > arg,
                  "maximum": lambda v: v <= arg}[key]
            return lambda v: not TYPES["number"](v) or op(v)
        if key in ("minItems", "maxItems"):
            size = (lambda n: n >= arg) if key == "minItems" else (lambda n: n <= arg)
            return lambda v: not isinstance(v, list) or size(len(v))
        if key in ("minLength", "maxLength"):
            fits = (lambda n: n >= arg) if key == "minLength" else (lambda n: n <= arg)
            return lambda v: not isinstance(v, str) or fits(len(v))
        if key == "prefixItems":
            firsts = [build(sub) for sub in arg]
            return lambda v: not isinstance(v, list) or all(c(x) for c, x in zip(firsts, v, strict=False))
        if key == "minProperties":
            return lambda v: not isinstance(v, dict) or len(v) >= arg
        if key == "required":
            return lambda v: not isinstance(v, dict) or all(k in v for k in arg)
        if key == "items":
            item = build(arg)
            return lambda v: not isinstance(v, list) or all(item(x) for x in v)
        if key == "properties":
            props = {k: build(sub) for k, sub in arg.items()}
            return lambda v: not isinstance(v, dict) or all(props[k](v[k]) for k in props if k in v)
        if key == "additionalProperties":
            known = set(s.get("properties", {}))
            if arg is False:
                return lambda v: not isinstance(v, dict) or all(k in known for k in v)
            extra = build(arg)
            return lambda v: not isinstance(v, dict) or all(extra(x) for k, x in v.items() if k not in known)
        if key in ("anyOf", "oneOf"):
            subs = [build(sub) for sub in arg]
            if key == "anyOf":
                return lambda v: any(c(v) for c in subs)
            return lambda v: sum(1 for c in subs if c(v)) == 1
        if key == "not":
            sub = build(arg)
            return lambda v: not sub(v)
        if key == "uniqueItems":
            if not arg:
                return lambda v: True
            return lambda v: not isinstance(v, list) or _unique(v)
        raise Unsupported(key)

    return build(root)


def _unique(values: list[object]) -> bool:
    """JSON Schema's uniqueItems: no two items equal as JSON values (1 and true differ)."""
    seen = set()
    for value in values:
        key = json.dumps(value, sort_keys=True)
        if key in seen:
            return False
        seen.add(key)
    return True

"""Dotted fields of a session and the pure decision of a `set` or `append`: plain data in,
the new session (or a refusal) out. Nothing here reads or writes files."""
from __future__ import annotations

import copy
import functools
import re
from typing import Any

from statedir.bus.errors import WrongType
from statedir.errors import IllegalTransition, ImmutableField, InvalidValue, ValidationFailed
from statedir.files import schema
from statedir.hints import Hint, Placeholder, said

SEGMENT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_@+-]{0,127}$")
MAX_DEPTH = 16
MISSING: Any = object()


def parse(field: str) -> list[str]:
    """`phases.1-design.status` -> its keys; INVALID_VALUE for anything else."""
    parts = field.split(".")
    if len(parts) > MAX_DEPTH or not all(SEGMENT_RE.fullmatch(p) for p in parts):
        raise InvalidValue(f"invalid field {field[:200]!r}: keys of letters, digits and _@+- joined by dots, "
                           f"e.g. phases.1-design.status (at most {MAX_DEPTH} keys)", field=field[:200])
    return parts


def lookup(doc: Any, parts: list[str]) -> Any:
    """The value at `parts` (a digit indexes a list), or MISSING."""
    node = doc
    for key in parts:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return MISSING
    return node


def _kind(value: Any) -> str:
    return "list" if isinstance(value, list) else "mapping" if isinstance(value, dict) else "string"


def _with(doc: dict[str, Any], parts: list[str], value: str, *, append: bool) -> dict[str, Any]:
    """A copy of `doc` with `value` set (or appended) at `parts`; mappings on the way are made."""
    new = copy.deepcopy(doc)
    node = new
    for depth, key in enumerate(parts[:-1], 1):
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise WrongType(f"{'.'.join(parts[:depth])} holds a {_kind(child)}, not a mapping of fields",
                            field=".".join(parts), holds=_kind(child))
        node = child
    last = parts[-1]
    if not append:
        node[last] = value
        return new
    current = node.get(last, MISSING)
    if current is MISSING:
        node[last] = [value]
    elif isinstance(current, list):
        current.append(value)
    else:
        raise WrongType(f"{'.'.join(parts)} holds a {_kind(current)}; append adds to a list (`set` replaces it)",
                        field=".".join(parts), holds=_kind(current))
    return new


SCHEMA_FILE = "schemas/bus-session.schema.json"  # the session schema, in the package and each store's .schemas/
SCHEMA_URI = "statedir://bus/schema"  # ... as the MCP server serves it


def _hint(old: dict[str, Any], parts: list[str], append: bool) -> str:
    """Which call writes what a refused write to a phase entry meant: a field of its `outputs`
    mapping, an item of one of its lists, or one of the fields an entry holds."""
    if len(parts) < 3 or parts[0] != "phases":
        return ""
    entry = schema.load_schema("bus-session")["$defs"]["phase_entry"]["properties"]
    field, key, session = ".".join(parts[:3]), parts[2], old.get("session", Placeholder("SESSION"))
    kind = entry.get(key, {}).get("type")
    if kind == "object" and len(parts) == 3:
        return said(f"; {field} is a mapping of contract fields: set one with `{{hint}}`",
                    _write("set", session, f"{field}.NAME"))
    if kind == "array" and not append:
        return said(f"; {field} is a list: add to it with `{{hint}}`", _write("append", session, field))
    if key not in entry:
        return said(f"; a phase entry holds {', '.join(entry)} and nothing else (the session schema: {SCHEMA_FILE}, "
                    f"{SCHEMA_URI} over MCP); a contract field goes in outputs: `{{hint}}`",
                    _write("set", session, f"{'.'.join(parts[:2])}.outputs.NAME"))
    return ""


def _write(verb: str, session: str, field: str) -> Hint:
    """The bus write `verb` of a VALUE to `field` (as written, NAME in it the reader's) of `session`."""
    return Hint(f"bus {verb}", {"session": session, "field": Placeholder(field), "value": Placeholder("VALUE")})


@functools.cache
def status_order() -> tuple[str, ...]:
    """The phase lifecycle, in order, as the session schema lists it."""
    entry = schema.load_schema("bus-session")["$defs"]["phase_entry"]
    return tuple(entry["properties"]["status"]["enum"])


def _check_statuses(old: dict[str, Any], new: dict[str, Any]) -> None:
    order = status_order()
    old_phases = old.get("phases", {})
    for name, entry in new.get("phases", {}).items():
        before = old_phases.get(name, {}).get("status") if isinstance(old_phases.get(name), dict) else None
        after = entry.get("status")
        if before in order and after in order and order.index(after) < order.index(before):
            raise IllegalTransition(f"phase {name} is {before}; a status moves forward only "
                                    f"({' -> '.join(order)})", phase=name, status=before, requested=after)


def decide(old: dict[str, Any], parts: list[str], value: str, *, append: bool) -> dict[str, Any]:
    """The session after `set` (replace whatever the field held) or `append` (add to a list,
    creating it); refused when the result breaks the schema or moves a phase status back."""
    if parts[0] == "session":
        raise ImmutableField("the session field is the session's id; `init` another session instead",
                             field="session")
    new = _with(old, parts, value, append=append)
    problems = schema.validate("bus-session", new, ".".join(parts))
    if problems:
        first = problems[0]
        raise ValidationFailed(f"{'.'.join(parts)}: {first.message} (at {first.path}){_hint(old, parts, append)}",
                               errors=[p.as_dict() for p in problems], schema=SCHEMA_FILE)
    _check_statuses(old, new)
    return new

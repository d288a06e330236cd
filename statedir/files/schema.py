"""Loading the JSON Schemas and validating plain data against them, errors collected as data."""
# Lazy imports: jsonschema, for a schema the fast validator (statedir.files.fastschema) does not support: jsonschema's
#   import is tens of ms; no transition loads it (tests/test_architecture.py).
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from statedir.files.fastschema import Unsupported, compile_schema
from statedir.files.parse_cache import digest

PACKAGE = Path(__file__).resolve().parent.parent  # statedir/, the installed package


def data_dir(kind: str) -> Path:
    """`schemas` or `templates`: inside the installed package, else at the repository top."""
    packaged = PACKAGE / "_data" / kind
    return packaged if packaged.is_dir() else PACKAGE.parent / kind


def schema_names() -> list[str]:
    return sorted(p.name.removesuffix(".schema.json") for p in data_dir("schemas").glob("*.schema.json"))


def schema_path(name: str) -> Path:
    return data_dir("schemas") / f"{name}.schema.json"


# Schemas made at run time (a template's compiled vocabularies), by name.
_REGISTERED: dict[str, dict[str, Any]] = {}


def register(name: str, doc: dict[str, Any]) -> None:
    """Make `doc` validatable as `name` (a name is registered once; its content never changes)."""
    _REGISTERED.setdefault(name, doc)


@functools.cache
def cache_kind(name: str) -> str:
    """The parse-cache kind for files valid under `name`: a new schema invalidates its entries."""
    raw = (json.dumps(_REGISTERED[name], sort_keys=True).encode() if name in _REGISTERED
           else schema_path(name).read_bytes())
    return f"{name}:{digest(raw)[:16]}"


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    if name in _REGISTERED:
        return _REGISTERED[name]
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


class Problem:
    """One validation failure: where (file, JSON path, line when known) and what. Immutable, equal
    and hashed by its fields, as a frozen dataclass (dataclasses imports inspect: a CLI transition
    would pay for it)."""

    __slots__ = ("file", "path", "message", "line")
    file: str
    path: str
    message: str
    line: int | None

    def __init__(self, file: str, path: str, message: str, line: int | None = None) -> None:
        for name, value in (("file", file), ("path", path), ("message", message), ("line", line)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple[str, str, str, int | None]:
        return (self.file, self.path, self.message, self.line)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if other.__class__ is self.__class__ else NotImplemented  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Problem(file={self.file!r}, path={self.path!r}, message={self.message!r}, line={self.line!r})"

    def replaced(self, **changes: Any) -> Problem:
        """A copy with `changes` (field -> value)."""
        return Problem(**{"file": self.file, "path": self.path, "message": self.message, "line": self.line, **changes})

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "path": self.path, "message": self.message}

    def __str__(self) -> str:
        return f"{self.file}::{self.path}: {self.message}"


@functools.cache
def _validator(name: str, pointer: str) -> Any:
    # Imported here: commands that validate nothing never pay for jsonschema.
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    if pointer:
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/{pointer}"}
    return Draft202012Validator(schema, format_checker=None)


def _line_of(doc: Any, path: list[Any]) -> int | None:
    """The 1-based line of a JSON path inside round-trip YAML data, when it can be found."""
    line = None
    node = doc
    for key in path:
        lc = getattr(node, "lc", None)
        try:
            if lc is not None:
                line = (lc.key(key) if isinstance(node, dict) else lc.item(key))[0] + 1
            node = node[key]
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


@functools.cache
def _fast(name: str, pointer: str) -> Any:
    schema = load_schema(name)
    if pointer:
        schema = {"$defs": schema["$defs"], "$ref": f"#/{pointer}"}
    try:
        return compile_schema(schema)
    except Unsupported:
        return None


def validate(name: str, plain: Any, file: str = "<data>", *, pointer: str = "",
             source: Any = None, quote: bool = True) -> list[Problem]:
    """Every way `plain` fails schema `name` (or its sub-schema at `pointer`), as Problems.
    With quote=False (data from a file outside the store) a Problem says where and what the
    schema expects, never the data's values or the keys the schema does not name."""
    fast = _fast(name, pointer)
    if fast is not None and fast(plain):
        return []
    problems = []
    for error in sorted(_validator(name, pointer).iter_errors(plain), key=lambda e: list(map(str, e.absolute_path))):
        path = list(error.absolute_path)
        line = _line_of(source, path) if source is not None else None
        if quote:
            problems.append(Problem(file, error.json_path, _short(error.message), line))
            continue
        extra = [k for k in error.instance if k not in error.schema.get("properties", {})] \
            if error.validator == "additionalProperties" and isinstance(error.instance, dict) else []
        if extra and source is not None:  # the line of the first key not allowed, which is not named
            line = _line_of(source, [*path, extra[0]]) or line
        problems.append(Problem(file, _unquoted_path(name, path), _short(_expected(error)), line))
    return problems


@functools.cache
def _named(name: str) -> frozenset[str]:
    """Every property name schema `name` declares anywhere."""
    found: set[str] = set()
    stack: list[Any] = [load_schema(name)]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else ())
            found.update(n for n in node.get("required", []) if isinstance(n, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


def _unquoted_path(name: str, path: list[Any]) -> str:
    """A JSON path whose keys the schema does not name are `*`."""
    return "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" if k in _named(name) else ".*" for k in path)


_EXPECTED = {"type": "expected type {v}", "enum": "expected one of {v}", "const": "expected {v!r}",
             "pattern": "does not match {v!r}", "format": "is not a valid {v}", "uniqueItems": "items must be unique",
             "minLength": "shorter than {v}", "maxLength": "longer than {v}", "minItems": "fewer than {v} items",
             "maxItems": "more than {v} items", "minimum": "less than {v}", "maximum": "more than {v}",
             "minProperties": "fewer than {v} properties", "maxProperties": "more than {v} properties",
             "propertyNames": "a property name is not allowed here"}


def _expected(error: Any) -> str:
    """What the schema wanted, in the schema's own terms (never the instance's)."""
    if error.validator == "required":  # names the missing property: the schema's word
        return str(error.message)
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = sorted(error.schema.get("properties", {}))
        shown = ", ".join(allowed[:10]) + (", ..." if len(allowed) > 10 else "")
        return "holds properties not allowed here" + (f"; allowed: {shown}" if allowed else "")
    if error.validator is None:  # a `false` schema: nothing is allowed there
        return "not allowed here"
    template = _EXPECTED.get(error.validator, "fails the schema's {k!r} rule")
    return template.format(v=error.validator_value, k=error.validator)


def _short(message: str) -> str:
    first = message.splitlines()[0]
    return first if len(first) <= 200 else first[:197] + "..."

"""Loading the JSON Schemas and validating plain data against them, errors collected as data."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    from statedir.files.parse_cache import digest

    raw = (json.dumps(_REGISTERED[name], sort_keys=True).encode() if name in _REGISTERED
           else schema_path(name).read_bytes())
    return f"{name}:{digest(raw)[:16]}"


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    if name in _REGISTERED:
        return _REGISTERED[name]
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Problem:
    """One validation failure: where (file, JSON path, line when known) and what."""

    file: str
    path: str
    message: str
    line: int | None = None

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
    from statedir.files.fastschema import Unsupported, compile_schema

    schema = load_schema(name)
    if pointer:
        schema = {"$defs": schema["$defs"], "$ref": f"#/{pointer}"}
    try:
        return compile_schema(schema)
    except Unsupported:
        return None


def validate(name: str, plain: Any, file: str = "<data>", *, pointer: str = "",
             source: Any = None) -> list[Problem]:
    """Every way `plain` fails schema `name` (or its sub-schema at `pointer`), as Problems."""
    fast = _fast(name, pointer)
    if fast is not None and fast(plain):
        return []
    problems = []
    for error in sorted(_validator(name, pointer).iter_errors(plain), key=lambda e: list(map(str, e.absolute_path))):
        path = list(error.absolute_path)
        line = _line_of(source, path) if source is not None else None
        problems.append(Problem(file, error.json_path, _short(error.message), line))
    return problems


def _short(message: str) -> str:
    first = message.splitlines()[0]
    return first if len(first) <= 200 else first[:197] + "..."

"""Reading and writing one entity file: schema modeline, schema version, validation."""
from __future__ import annotations

from typing import Any

from statedir.errors import BadFile, InvalidValue, ValidationFailed
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.research.errors import UNKNOWN, SchemaVersionMismatch
from statedir.research.kinds import SCHEMA_VERSION, Kind
from statedir.store.layout import schema_ref
from statedir.store.store import Store


def parse(raw: bytes, rel: str) -> dict[str, Any]:
    """The plain record in a research file; a foreign schema version is a loud error."""
    data = yaml_fast_reader.read_own(raw, schema_ref(rel))
    if data is yaml_fast_reader.FOREIGN:  # hand-edited: ruamel reads it
        data = yaml.to_plain(yaml.load(raw, rel))
    if not isinstance(data, dict):
        raise BadFile(f"{rel}: a research record must be a mapping", file=rel)
    version = data.get("schema_version", SCHEMA_VERSION)  # absent: written as version 1
    if version != SCHEMA_VERSION:
        raise SchemaVersionMismatch(
            f"{rel} has schema_version {version!r} but this statedir reads version {SCHEMA_VERSION}; "
            "it was written by an incompatible version and needs a migration before it can be read",
            file=rel, found=version, expected=SCHEMA_VERSION)
    return data


def public(kind: Kind, data: dict[str, Any]) -> dict[str, Any]:
    """The record as research-lab-skills' state.py prints it: events keep their schema_version, the rest do not."""
    if kind.event:
        return dict(data)
    return {k: v for k, v in data.items() if k != "schema_version"}


def read(store: Store, kind: Kind, entity_id: str) -> dict[str, Any] | None:
    """The record as callers see it (see `public`), or None when there is no such file."""
    rel = kind.rel(entity_id)
    raw = store.read_bytes(rel)
    return None if raw is None else public(kind, parse(raw, rel))


def require(store: Store, kind: Kind, entity_id: str) -> dict[str, Any]:
    record = read(store, kind, entity_id)
    if record is None:
        raise UNKNOWN[kind.name](f"Unknown {kind.name}_id: {entity_id}", **{f"{kind.name}_id": entity_id})
    return record


def dump(store: Store, kind: Kind, record: dict[str, Any]) -> bytes:
    """The file's bytes for a record, checked against its schema first.

    An existing hand-edited file keeps its comments and key order (round-trip merge)."""
    return encode(kind, record, store.read_bytes(kind.rel(record["id"])))


def stored(record: dict[str, Any]) -> dict[str, Any]:
    """The record as its file holds it: `schema_version` first."""
    return {"schema_version": SCHEMA_VERSION, **{k: v for k, v in record.items() if k != "schema_version"}}


def encode(kind: Kind, record: dict[str, Any], old: bytes | None) -> bytes:
    """`dump` on the bytes `old` the file held (None: a new file); verify's replay shares it."""
    rel = kind.rel(record["id"])
    data = stored(record)
    problems = schema.validate(kind.schema, data, rel)
    if problems:
        raise ValidationFailed(f"refusing to write an invalid {kind.name}: {problems[0]}",
                               errors=[p.as_dict() for p in problems])
    ref = schema_ref(rel)
    text = yaml.dump(data, ref)
    if old is not None and yaml_fast_reader.read_own(old, ref) is yaml_fast_reader.FOREIGN:
        doc = yaml.load(old, rel)
        if isinstance(doc, dict):
            text = yaml.dump(yaml.merge(doc, data), ref)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a value from undecodable argv bytes
        raise InvalidValue(f"a {kind.name} value is not valid UTF-8 text") from None

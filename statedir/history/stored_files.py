"""A store file's bytes as history reads them at a commit: plain data, validated against the
schema the file names, and whether the bytes are exactly what statedir writes for that data."""
from __future__ import annotations

from typing import Any

from statedir.errors import CorruptStore
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.store import layout


def parse(rel: str, raw: bytes) -> tuple[Any, bool]:
    """(plain data, canonical) of a store file's bytes, validated against its schema;
    canonical: the bytes are exactly what statedir writes for that data."""
    name = layout.schema_for(rel) or ""
    ref = layout.own_ref(rel, raw)  # a run file names its template's compiled schema
    is_log = name.startswith("log-")
    own = yaml_fast_reader.read_own(raw, ref)
    if own is not yaml_fast_reader.FOREIGN and (own is not None or is_log) and not schema.validate(name, own, rel):
        return (own or [] if is_log else own), True
    doc = yaml.load(raw, rel)
    plain = yaml.to_plain(doc)
    problems = schema.validate(name, plain, rel, source=doc) if name else []
    if problems or (not is_log and not isinstance(plain, dict)):
        raise CorruptStore(f"{problems[0] if problems else rel + ': not a mapping'}", file=rel)
    return (plain or [] if is_log else plain), yaml.dump(plain, ref).encode() == raw

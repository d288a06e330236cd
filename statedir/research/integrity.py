"""`--validate`: every dangling reference in the research files, and every Source that names
the same document as an earlier one without being recorded as its alias (two machines
registered it; statedir.research.aliases), read from the files themselves (not the index);
nothing is repaired."""
from __future__ import annotations

import os
from typing import Any

from statedir.research import aliases, arrival, records
from statedir.research.kinds import KINDS, ROOT, Kind
from statedir.store.store import Store


def of_kind(store: Store, kind: Kind) -> dict[str, dict[str, Any]]:
    """Every record of one kind in the work tree: id -> record."""
    folder = store.root / ROOT / kind.folder
    found: dict[str, dict[str, Any]] = {}
    if folder.is_dir():
        for name in sorted(os.listdir(folder)):
            if name.endswith(".yaml"):
                rel = f"{ROOT}/{kind.folder}/{name}"
                raw = store.read_bytes(rel)
                if raw is not None:
                    found[name[:-5]] = records.parse(raw, rel)
    return found


def _ids(store: Store) -> dict[str, dict[str, dict[str, Any]]]:
    return {kind.name: of_kind(store, kind) for kind in KINDS.values()}


def violations(store: Store) -> list[dict[str, Any]]:
    """`{entity, id, field, missing_id}` for each link to a record that does not exist, and
    `{entity: source, id, field: doi|url, duplicate_of}` for each duplicate Source no alias records."""
    everything = _ids(store)
    out = []
    for kind in KINDS.values():
        for entity_id, record in everything[kind.name].items():
            for field, target in kind.links.items():
                value = record.get(field)
                if value is not None and value not in everything[target]:
                    out.append({"entity": kind.name, "id": entity_id, "field": field, "missing_id": value})
    for found in aliases.duplicates(everything["source"], arrival.earliest(store, everything["source"])):
        out.append({"entity": "source", "id": found["id"], "field": found["key"].partition(":")[0],
                    "duplicate_of": found["alias_of"]})
    return out

"""`--validate`: every dangling reference in the research files, read from the files
themselves (not the index); nothing is repaired."""
from __future__ import annotations

import os
from typing import Any

from statedir.research import records
from statedir.research.kinds import KINDS, ROOT
from statedir.store.disk import Store


def _ids(store: Store) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for kind in KINDS.values():
        folder = store.root / ROOT / kind.folder
        found: dict[str, dict[str, Any]] = {}
        if folder.is_dir():
            for name in sorted(os.listdir(folder)):
                if name.endswith(".yaml"):
                    rel = f"{ROOT}/{kind.folder}/{name}"
                    raw = store.read_bytes(rel)
                    if raw is not None:
                        found[name[:-5]] = records.parse(raw, rel)
        out[kind.name] = found
    return out


def violations(store: Store) -> list[dict[str, Any]]:
    """`{entity, id, field, missing_id}` for each link to a record that does not exist."""
    everything = _ids(store)
    out = []
    for kind in KINDS.values():
        for entity_id, record in everything[kind.name].items():
            for field, target in kind.links.items():
                value = record.get(field)
                if value is not None and value not in everything[target]:
                    out.append({"entity": kind.name, "id": entity_id, "field": field, "missing_id": value})
    return out

"""doctor's finding for research Sources two machines registered (the same DOI or URL) that a merge
brought together and no alias records (statedir.research.aliases), repaired by recording the later
one as an alias of the earlier, in one research commit."""
from __future__ import annotations

from typing import Any

from statedir.research import Ledger, aliases, arrival, integrity
from statedir.research.kinds import KINDS
from statedir.store.store import Store


def findings(store: Store, actor: str) -> list[dict[str, Any]]:
    """One finding per duplicated Source, the first carrying the repair of them all."""
    if not (store.root / "research" / "sources").is_dir():
        return []
    sources = integrity.of_kind(store, KINDS["source"])
    found = aliases.duplicates(sources, arrival.earliest(store, sources))
    return [{"kind": "duplicate_source", "file": KINDS["source"].rel(d["id"]),
             "message": f"source {d['id']} names the same document as the earlier {d['alias_of']} ({d['key']}): "
                        "two machines registered it and a merge brought both",
             "fix": f"record it as an alias of {d['alias_of']} (one research commit for all)",
             "_repair": (lambda: Ledger(store, actor=actor).record_aliases()) if i == 0 else None}
            for i, d in enumerate(found)]

"""Making a store, or checking one out (`statedir init`): the store layer's, with a branch taken
from a remote verified before it is used (statedir.sync.verified.vet)."""
# Lazy imports: sync.verified: each method imports what its own call uses, so a call pays for its own path only (every
#   command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.store import create


def init(directory: str | Path = "state", branch: str | None = None, new_store: bool = False) -> dict[str, Any]:
    """Make a store at `directory` and commit it (statedir.store.create.init); a branch checked out
    again is verified first, all of its history the first time, and refused where it does not verify."""
    vet = None
    if branch is not None:
        from statedir.sync import verified  # history's verify, loaded only where a branch may be attached

        vet = verified.vet
    return create.init(directory, branch, new_store, vet=vet)

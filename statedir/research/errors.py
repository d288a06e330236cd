"""The research ledger's error codes (all under statedir's one root, StatedirError)."""
from __future__ import annotations

from statedir.errors import BAD_INPUT, ENVIRONMENT, StatedirError


class UnknownEntity(StatedirError):
    """A foreign key names a record that does not exist (exit 2)."""

    exit_code = BAD_INPUT


def _unknown(kind: str) -> type[UnknownEntity]:
    code = f"UNKNOWN_{kind.upper()}"
    return type(f"Unknown{kind.title()}", (UnknownEntity,), {"code": code, "__doc__": f"{code} (exit 2)."})


UNKNOWN = {kind: _unknown(kind) for kind in
           ("project", "question", "hypothesis", "experiment", "run", "source", "evidence", "result", "claim")}


class SchemaVersionMismatch(StatedirError):
    """A research file carries a `schema_version` this code does not understand (exit 3)."""

    code = "SCHEMA_VERSION_MISMATCH"
    exit_code = ENVIRONMENT


class IndexUnavailable(StatedirError):
    """The SQLite index stayed locked by another process past the wait (exit 3)."""

    code = "INDEX_BUSY"
    exit_code = ENVIRONMENT

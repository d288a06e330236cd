"""The bus's own error codes (under statedir's one root, StatedirError, like every error)."""
from __future__ import annotations

from statedir.errors import REFUSED, StatedirError


class UnknownSession(StatedirError):
    """UNKNOWN_SESSION (exit 1, as pipeline-state.sh's `get` of a missing session)."""

    code = "UNKNOWN_SESSION"
    exit_code = REFUSED


class EvidenceMissing(StatedirError):
    """EVIDENCE_MISSING (exit 1): `append --check-path` named a path that does not exist."""

    code = "EVIDENCE_MISSING"
    exit_code = REFUSED


class WrongType(StatedirError):
    """WRONG_TYPE (exit 1): append to a field that is not a list, or a dotted field through a value
    that is not a mapping."""

    code = "WRONG_TYPE"
    exit_code = REFUSED

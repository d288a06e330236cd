"""The five ARS adjudication-activity rows as every run starts them, without the contract's checks
(statedir.engine.adjudication_contract): what reading a run fills in needs no more, and a transition
or `next` never pays for the contract's imports."""
from __future__ import annotations

from typing import Any

CAPTURED, NOT_APPLICABLE, UNAVAILABLE = "captured", "not_applicable", "unavailable"
NOT_APPLICABLE_REASON = "not_applicable_for_run"
FAMILY_NAMES = ("revision_author_adjudication", "compliance_report", "re_review_traceability",
                "explicit_user_request", "mandatory_checkpoint_response")


def initial_rows() -> list[dict[str, Any]]:
    """A new run's bindings: every family not applicable, no artifacts."""
    return [{"source_family": name, "capture_state": NOT_APPLICABLE, "reason_code": NOT_APPLICABLE_REASON,
             "artifacts": []} for name in FAMILY_NAMES]


def canonical(rows: Any) -> bool:
    """Whether `rows` are the five rows in their order (what they hold is the contract's to check)."""
    return isinstance(rows, list) and len(rows) == len(FAMILY_NAMES) and all(
        isinstance(row, dict) and row.get("source_family") == name and "capture_state" in row
        for row, name in zip(rows, FAMILY_NAMES, strict=True))

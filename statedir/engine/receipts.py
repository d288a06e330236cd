"""The adjudication receipts statedir writes itself, as the handler that answers checkpoints.

The template's `adjudication_receipts:` names, per source family (`mandatory_checkpoint_response`,
`explicit_user_request`), which checkpoint answers write a receipt. The receipt is appended to the
family's log at the answer, in the answer's own commit, and the log's one file is bound to the
family's pending adjudication row (best effort: a row the caller bound already is left as it is).
A refused attempt to skip a MANDATORY checkpoint writes nothing (every refusal leaves the store
byte-identical); the answer that follows it says so (`skip_refused`), and its receipt records
`outcome: skip_refused`. Pure, like rules.py: no family or stage is chosen here.
"""
from __future__ import annotations

from typing import Any

from statedir.engine import adjudication_contract as contract
from statedir.engine.template import Template
from statedir.engine.transition_data import RunDraft, Request
from statedir.errors import InvalidValue
from statedir.hints import opt

PENDING = "pending_adjudication_activity_bindings"


def declared(t: Template) -> dict[str, dict[str, Any]]:
    return t.doc.get("adjudication_receipts") or {}


def check_request(t: Template, checkpoint: dict[str, Any], req: Request) -> None:
    """`skip_refused` only where a skip is refused: at a checkpoint whose answers write a receipt."""
    if not req.args.get("skip_refused"):
        return
    if not any(checkpoint["type"] in spec.get("checkpoint_types", []) for spec in declared(t).values()):
        raise InvalidValue(f"{opt('skip_refused')} records a refused skip of a MANDATORY checkpoint; the open checkpoint "
                           f"of stage {t.display(checkpoint['stage'])} is {checkpoint['type']}",
                           checkpoint=checkpoint["type"])


def write(t: Template, draft: RunDraft, req: Request, checkpoint: dict[str, Any], response: str,
          target: str | None, now: str, answer: dict[str, Any] | None = None) -> list[str]:
    """Append the receipts this answer writes and bind their logs; the families written."""
    written = []
    for family, spec in declared(t).items():
        if checkpoint["type"] not in spec.get("checkpoint_types", []) and response not in spec.get("responses", []):
            continue
        day = str(draft.state.get("created_at") or now)[:10]
        entry: dict[str, Any] = {
            "at": now, "log_day": day, "source_family": family, "stage": checkpoint["stage"],
            "receipt_stage": str(t.stage(checkpoint["stage"]).get("ars_stage") or checkpoint["stage"]),
            "checkpoint_type": checkpoint["type"],
            "outcome": "skip_refused" if req.args.get("skip_refused") else "answered",
            "response": response, "next": target}
        if answer:
            entry["answer"] = answer
        if req.args.get("answered_by"):
            entry["answered_by"] = req.args["answered_by"]
        draft.log(family, entry)
        _bind(draft, family, f"{draft.run.run_id}", day, req.args.get("store_prefix"))
        written.append(family)
    return written


def log_path(run_id: str, family: str, day: str, prefix: str | None) -> str:
    """The receipt log's one file, relative to the work tree (the root `seal --artifact-root` takes)."""
    rel = f"runs/{run_id}/history/{family}/{day}.yaml"
    return rel if not prefix or prefix == "." else f"{prefix}/{rel}"


def _bind(draft: RunDraft, family: str, run_id: str, day: str, prefix: str | None) -> None:
    rows = draft.state.get(PENDING)
    if not isinstance(rows, list) or family not in contract.BY_NAME:
        return
    spec = contract.BY_NAME[family]
    artifact = {"artifact_id": f"{family}_log", "artifact_role": spec.roles[0],
                "artifact_group_id": f"SOURCE-GROUP-{family.replace('_', '-')}", "artifact_group_stage": None,
                "relative_path": log_path(run_id, family, day, prefix)}
    for row in rows:
        if row.get("source_family") != family:
            continue
        if row.get("capture_state") == contract.CAPTURED and row.get("artifacts") != [artifact]:
            return  # bound by the caller already: best effort leaves it
        bound = {**row, "capture_state": contract.CAPTURED, "reason_code": None, "artifacts": [artifact]}
        if not contract.row_problems(bound, spec, sealed=False):
            row.update(bound)

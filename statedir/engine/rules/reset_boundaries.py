"""Reset boundaries: the passport ledger of `boundary` and `resume` entries and its hash."""
from __future__ import annotations

import datetime
import hashlib
import json
from typing import Any

from statedir.engine import materials
from statedir.engine.rules import stage_graph
from statedir.engine.run_document import awaiting_resume
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, Request, RunData, RunDraft
from statedir.errors import IllegalTransition, InvalidValue
from statedir.hints import opt

ZERO = "000000000000"


def jcs(value: Any) -> str:
    """RFC 8785 canonical JSON for the values the ledger holds (no floats)."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be"))
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{jcs(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, float):
        raise ValueError("the ledger holds no floating-point numbers")
    return json.dumps(value, ensure_ascii=False)


def boundary_hash(prior: list[dict[str, Any]], entry: dict[str, Any]) -> str:
    """First 12 hex of SHA-256 over every prior boundary and the new one (hash zeroed), LF-terminated."""
    lines = [jcs(e) for e in prior if e.get("kind") == "boundary"]
    lines.append(jcs({**entry, "hash": ZERO}))
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode("utf-8")).hexdigest()[:12]


def shape(t: Template) -> str | None:
    """The shape of the entries the template's runs write: `upstream` (the ARS reset_ledger_entry
    contract), or None for the version-1 shape of older templates."""
    return (t.doc.get("reset_ledger") or {}).get("shape")


def is_boundary(t: Template, stage_id: str, kind: str) -> bool:
    """Whether the checkpoint opened after `stage_id` is a reset boundary: every FULL one, and the
    MANDATORY checkpoints awaiting a decision the template lists."""
    return kind == "FULL" or stage_id in ((t.doc.get("reset_ledger") or {}).get("decision_boundaries") or [])


def append_boundary(t: Template, draft: RunDraft, stage_id: str, choices: list[str], default: str | None,
                    now: str, session: str | None = None) -> None:
    prior = list(draft.run.boundary_log or []) + [e for name, e in draft.logs if name == "reset_boundary"]
    pending = _pending(t, stage_id, choices)
    if shape(t) == "upstream":
        entry = _upstream(t, draft, stage_id, choices, default, now, session, pending)
    else:
        entry = {"kind": "boundary", "hash": ZERO, "at": now, "stage": stage_id, "next": default,
                 "pending_decision": pending}
    entry["hash"] = boundary_hash(prior, entry)
    draft.log("reset_boundary", entry)


def _pending(t: Template, stage_id: str, choices: list[str]) -> dict[str, Any] | None:
    declared = ((t.doc.get("reset_ledger") or {}).get("decisions") or {}).get(stage_id) \
        or (t.doc.get("checkpoint_decisions") or {}).get(stage_id)
    if declared:  # a decision the template names (e.g. the Stage 5 format), each option leading on
        target = choices[0] if choices else None
        return {"question": declared["question"],
                "options": [{"value": str(v), "next_stage": target} for v in declared["options"]]}
    if len(choices) > 1:
        return {"question": f"where does the pipeline go after stage {t.display(stage_id)}?",
                "options": [{"value": c, "next_stage": c} for c in choices]}
    return None


def _upstream(t: Template, draft: RunDraft, stage_id: str, choices: list[str], default: str | None, now: str,
              session: str | None, pending: dict[str, Any] | None) -> dict[str, Any]:
    """A boundary in the ARS reset_ledger_entry shape: no field null, `pending_decision` only where
    there is one, `next` the stage expected next (the first option where the user has to choose)."""
    state, record = draft.state, draft.view(stage_id)
    label, passport = current_draft(t, draft.run, state)
    entry: dict[str, Any] = {"kind": "boundary", "hash": ZERO, "stage": stage_id,
                             "next": default or (choices[0] if choices else stage_id),
                             "generated_at": now, "session_marker": session or "unknown-session",
                             "version_label": label or "unversioned"}
    if record.get("mode"):
        entry["mode"] = str(record["mode"])
    if passport is not None:
        entry["verification_status"] = _status(t, passport, now)
    if pending:
        entry["pending_decision"] = pending
    return entry


def current_draft(t: Template, run: RunData, state: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """The label and passport of the run's current draft (the series its integrity stages verify)."""
    series = next((s["integrity"].get("verifies_draft_series") for s in t.stages if "integrity" in s), None)
    label = (state.get("current_version") or {}).get(series or "")
    if label is None:
        labels = list((state.get("current_version") or {}).values())
        label = labels[-1] if labels else None
    return label, (run.passports.get(label) if label else None)


def _status(t: Template, passport: dict[str, Any], now: str) -> str:
    clock = datetime.datetime.fromisoformat(now.replace("Z", "+00:00"))
    return materials.effective_status(passport, clock, t.doc.get("passport_stale_hours", 24))


def consumed(entry: dict[str, Any]) -> str | None:
    """The boundary hash a resume entry consumes (either shape); None for a boundary."""
    if entry.get("kind") != "resume":
        return None
    return entry.get("consumes_hash") or entry.get("hash")


def resume(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    """Consume one boundary; a pending decision must be answered; then continue as `confirm` would."""
    boundary_log = run.boundary_log or []
    wanted = req.args["hash"]
    matches = [e for e in boundary_log if e.get("kind") == "boundary" and e.get("hash") == wanted]
    if not matches:
        raise IllegalTransition(f"no reset boundary with hash {wanted!r} in this run", hash=wanted)
    if wanted not in awaiting_resume(boundary_log):
        raise IllegalTransition(f"reset boundary {wanted} was already resumed", hash=wanted)
    boundary = matches[0]
    choice, target = req.args.get("choice"), req.args.get("stage")
    pending = boundary.get("pending_decision")
    if pending:
        values = [o["value"] for o in pending["options"]]
        if choice not in values:
            raise InvalidValue(f"this boundary has a pending decision: {pending['question']} "
                               f"answer with {' or '.join(opt('choice') + ' ' + value for value in values)}", options=values)
        target = target or next(o["next_stage"] for o in pending["options"] if o["value"] == choice)
    elif choice is not None and shape(t) == "upstream":
        raise InvalidValue(f"reset boundary {wanted} has no pending decision; resume it without {opt('choice')}",
                           hash=wanted)
    target = target or boundary.get("next")
    checkpoint = run.state.get("checkpoint")
    if checkpoint and checkpoint["stage"] == boundary["stage"]:
        asked = (t.doc.get("checkpoint_decisions") or {}).get(boundary["stage"])  # the choice is its answer
        answer = {asked["option"]: choice} if asked and choice is not None else {}
        answer.update({"store_prefix": req.args["store_prefix"]} if req.args.get("store_prefix") else {})
        change = stage_graph.confirm(t, run, Request("confirm", req.actor, {"next": target, "response": "continue",
                                                                           **answer}), now, None)
    else:
        change = RunDraft(run).change("", now)
    if shape(t) == "upstream":
        override = {k: str(req.args[k]) for k in ("stage", "mode") if req.args.get(k)}
        change.logs.append(("reset_boundary", {
            "kind": "resume", "consumes_hash": wanted, "chosen_branch": str(choice or target or boundary["next"]),
            "user_override": override, "generated_at": now,
            "session_marker": str(req.args.get("session") or "unknown-session")}))
        label, passport = current_draft(t, run, run.state)
        status = _status(t, passport, now) if passport is not None else None
        if status in ("STALE", "UNVERIFIED"):
            change.result["warning"] = (f"the draft {label} is {status}: verify it again before going on "
                                        "(the boundary resumed all the same)")
    else:
        change.logs.append(("reset_boundary", {"kind": "resume", "hash": wanted, "at": now,
                                               "stage": boundary["stage"], "mode": req.args.get("mode"),
                                               "choice": choice}))
    change.summary = f"resume from boundary {wanted} (stage {t.display(boundary['stage'])})" + (
        f" -> {target}" if target else "")
    return change

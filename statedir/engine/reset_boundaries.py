"""Reset boundaries: the passport ledger of `boundary` and `resume` entries and its hash."""
from __future__ import annotations

import json
from typing import Any

from statedir.engine.decision import Change, Draft, Request, RunData
from statedir.engine.runs import awaiting_resume
from statedir.engine.template import Template
from statedir.errors import IllegalTransition, InvalidValue

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
    import hashlib

    lines = [jcs(e) for e in prior if e.get("kind") == "boundary"]
    lines.append(jcs({**entry, "hash": ZERO}))
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode("utf-8")).hexdigest()[:12]


def append_boundary(t: Template, draft: Draft, stage_id: str, choices: list[str], default: str | None,
                    now: str) -> None:
    prior = list(draft.run.ledger or []) + [e for name, e in draft.logs if name == "reset_boundary"]
    pending = None
    if len(choices) > 1:
        pending = {"question": f"where does the pipeline go after stage {t.display(stage_id)}?",
                   "options": [{"value": c, "next_stage": c} for c in choices]}
    entry = {"kind": "boundary", "hash": ZERO, "at": now, "stage": stage_id, "next": default,
             "pending_decision": pending}
    entry["hash"] = boundary_hash(prior, entry)
    draft.log("reset_boundary", entry)


def resume(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    """Consume one boundary; a pending decision must be answered; then continue as `confirm` would."""
    from statedir.engine import stage_graph

    ledger = run.ledger or []
    wanted = req.args["hash"]
    matches = [e for e in ledger if e.get("kind") == "boundary" and e.get("hash") == wanted]
    if not matches:
        raise IllegalTransition(f"no reset boundary with hash {wanted!r} in this run", hash=wanted)
    if wanted not in awaiting_resume(ledger):
        raise IllegalTransition(f"reset boundary {wanted} was already resumed", hash=wanted)
    boundary = matches[0]
    choice, target = req.args.get("choice"), req.args.get("stage")
    pending = boundary.get("pending_decision")
    if pending:
        values = [o["value"] for o in pending["options"]]
        if choice not in values:
            raise InvalidValue(f"this boundary has a pending decision: {pending['question']} "
                               f"answer with --choice {' or --choice '.join(values)}", options=values)
        target = target or next(o["next_stage"] for o in pending["options"] if o["value"] == choice)
    target = target or boundary.get("next")
    checkpoint = run.state.get("checkpoint")
    if checkpoint and checkpoint["stage"] == boundary["stage"]:
        change = stage_graph.confirm(t, run, Request("confirm", req.actor, {"next": target, "response": "continue"}),
                               now, None)
    else:
        change = Draft(run).change("", now)
    change.logs.append(("reset_boundary", {"kind": "resume", "hash": wanted, "at": now,
                                           "stage": boundary["stage"], "mode": req.args.get("mode"),
                                           "choice": choice}))
    change.summary = f"resume from boundary {wanted} (stage {t.display(boundary['stage'])})" + (
        f" -> {target}" if target else "")
    return change

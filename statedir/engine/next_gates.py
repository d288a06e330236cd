"""The integrity gates' candidates for `statedir next` (statedir.engine.next_moves): the user's
FAIL-loop resolutions, the failure-mode checklist and the user's answers to its blocking modes.
Only questions put to the rules: which are moves, the rules decide."""
from __future__ import annotations

from typing import Any

from statedir.engine import failure_modes
from statedir.engine.move_candidates import REASON, Candidate, actor_for
from statedir.engine.rules import compliance, entry_advisories, gates
from statedir.engine.template import Template
from statedir.engine.transition_data import RunData
from statedir.hints import opt, said


def command_of(action: str) -> str:
    """The command a move is typed as (the action `acknowledge_mode` is the CLI's `acknowledge`)."""
    return {**failure_modes.COMMAND, "compliance_override": "compliance"}.get(action, action)


def _reason(t: Template, run: RunData, stage_id: str, at_least: int = 0) -> str | None:
    """A reason as long as the override ladder's round at `stage_id` asks (None where it asks none)."""
    ladder = t.doc.get("override_ladder") or [0]
    least = max(at_least, int(ladder[min(gates.ladder_round(t, run.state, stage_id), len(ladder)) - 1]))
    return None if least == 0 else REASON.ljust(least, ".")


def candidates(t: Template, run: RunData, stage_ids: list[str], *, flow: bool = False) -> list[Candidate]:
    """Resolutions, the checklist every mode clear (where none stands, or one blocks), and
    (outside the flow's exploration) each answer to each blocking mode of the stages' checklists."""
    return _resolve(t, run, stage_ids) + _checklist(t, run, stage_ids) + ([] if flow else _answers(t, run, stage_ids))


def _resolve(t: Template, run: RunData, stage_ids: list[str]) -> list[Candidate]:
    loop, out = t.doc.get("fail_loop"), []
    for stage_id in stage_ids if loop else []:
        actor = actor_for(t, "resolve", stage_id)
        if actor is None or "integrity" not in t.stage(stage_id):
            continue
        reason = _reason(t, run, stage_id)
        for decision in loop["decisions"]:
            out.append(Candidate("resolve", actor, {"stage": stage_id, "decision": decision},
                                 {"stage": stage_id, "decision": decision}, ("decision",), reason))
    return out


def _checklist(t: Template, run: RunData, stage_ids: list[str]) -> list[Candidate]:
    spec, out = failure_modes.declared(t), []
    for stage_id in [s for s in stage_ids if failure_modes.carries(t, s)]:
        record = run.stages[stage_id]
        if record.get("failure_modes") and not failure_modes.standing(record):
            continue  # one stands that does not block: a new one is no move the run waits for
        actor = actor_for(t, failure_modes.CHECKLIST, stage_id)
        if actor is not None and spec is not None:
            items = [f"{mode}={spec['clear']}" for mode in failure_modes.mode_ids(spec)]
            out.append(Candidate(failure_modes.CHECKLIST, actor, {"stage": stage_id, "items": items, "evidence": []},
                                 {"stage": stage_id}, ("stage",)))
    return out


def _answers(t: Template, run: RunData, stage_ids: list[str]) -> list[Candidate]:
    spec, out = failure_modes.declared(t), []
    for stage_id in [s for s in stage_ids if failure_modes.carries(t, s)]:
        actor = actor_for(t, failure_modes.ACKNOWLEDGE, stage_id)
        if actor is None or spec is None:
            continue
        for mode in failure_modes.standing(run.stages[stage_id]):
            for answer, effect in spec["answers"].items():
                reason = _reason(t, run, stage_id, 1) if effect == failure_modes.CLEAR else None
                shown = {"stage": stage_id, "mode": mode, "answer": answer}
                out.append(Candidate(failure_modes.ACKNOWLEDGE, actor, dict(shown), shown, ("mode", "answer"), reason))
    return out


def noted(t: Template, move: dict[str, Any]) -> dict[str, Any]:
    """A checklist move with a `note` naming the modes and outcomes its --item takes."""
    if move["command"] == "advisory":
        return {**move, "note": said(f"{opt('file')} REPORT, or {opt('unavailable')} CODE where the advisory "
                                     "could not run")}
    spec = failure_modes.declared(t)
    if move["command"] != failure_modes.CHECKLIST or spec is None:
        return move
    modes = failure_modes.named(spec, failure_modes.mode_ids(spec))
    return {**move, "note": said(f"{opt('item')} MODE=OUTCOME for every mode ({modes}); "
                                 f"outcomes {', '.join(spec['outcomes'])}")}


_FILE = {"path": "-", "content_hash": "0" * 64}


def entry_candidates(t: Template, run: RunData) -> list[Candidate]:
    """The Stage 5 entry advisories (each kind with a report) and compliance at the current stage:
    a report, and the user's acknowledgement of a standing block."""
    out: list[Candidate] = []
    for kind in entry_advisories.kinds(t):
        actor = actor_for(t, "advisory")
        if actor is not None:
            args = {"kind": kind, "file": _FILE, "unavailable": None, "classes": {"-": "-"}}
            out.append(Candidate("advisory", actor, args, {"kind": kind}, ("kind",)))
    spec, current = compliance.declared(t), run.state.get("current_stage")
    if spec and current in spec["stages"]:
        least = spec["severities"][0]
        body = {"items": [{"id": "-", "verdict": least}], "decision": least}
        report = {"mode": "-", "tier": "-", "overall_decision": least,
                  "frameworks": {fw: body for fw in spec.get("frameworks", [])}}
        actor = actor_for(t, "compliance", current)
        if actor is not None:
            out.append(Candidate("compliance", actor, {"stage": current, "file": _FILE, "report": report},
                                 {"stage": current}, ("stage",)))
        actor = actor_for(t, "compliance_override", current)
        if actor is not None and compliance.standing_block(t, run, current):
            out.append(Candidate("compliance_override", actor, {"stage": current, "answered_by": "user"},
                                 {"stage": current}, ("stage",), _reason(t, run, current)))
    return out


def advisories_shown(t: Template, run: RunData) -> dict[str, Any]:
    """`next`'s word on the recorded Stage 5 entry advisories (each CURRENT or STALE), where any are."""
    shown = [{k: e[k] for k in ("kind", "version_label", "binding")} for e in entry_advisories.shown(t, run)]
    return {"advisories": shown} if shown else {}

"""The AI research failure-mode checklist as the template declares it (`failure_modes`: the
modes, outcomes, block and warn rules, the user's answers, the carry-over rule): what blocks a
stage, what a stage needs before it completes, and the audit `show --format ars` carries. Pure,
like rules.py; the engine knows no mode, outcome or stage by name: each is the template's."""
from __future__ import annotations

from typing import Any

# What each of the user's answers does (the template names the answers): send the run back,
# clear the mode for this stage, keep it blocking until a new checklist.
from statedir.engine.failure_modes_meaning import BACK, CLEAR, KEEP
from statedir.engine.template import Template
from statedir.errors import FailureModeBlock
from statedir.hints import Hint, Placeholder, said

__all__ = ["BACK", "CLEAR", "KEEP"]
CHECKLIST, ACKNOWLEDGE = "checklist", "acknowledge_mode"  # the actions (the CLI's checklist, acknowledge)
COMMAND = {ACKNOWLEDGE: "acknowledge"}  # the command an action is typed as, where the two differ


def declared(t: Template) -> dict[str, Any] | None:
    return t.doc.get("failure_modes")


def carries(t: Template, stage_id: str) -> bool:
    """Whether the stage runs the checklist (the template's `failure_modes.stages`)."""
    spec = declared(t)
    return bool(spec) and stage_id in spec["stages"]


def mode_ids(spec: dict[str, Any]) -> list[str]:
    return [str(m["id"]) for m in spec["modes"]]


def named(spec: dict[str, Any], modes: list[str]) -> str:
    """`3 (hallucinated result), 5 (bug as insight)`."""
    names = {str(m["id"]): m["name"] for m in spec["modes"]}
    return ", ".join(f"{m} ({names.get(m, '?')})" for m in modes)


def _hits(rules: list[dict[str, Any]], outcomes: dict[str, str], order: list[str]) -> list[str]:
    """The modes whose outcome a rule names (for its modes, or every mode where it lists none)."""
    return [m for m in order if any(outcomes.get(m) == r["outcome"] and (not r.get("modes") or m in r["modes"])
                                    for r in rules)]


def judged(t: Template, state: dict[str, Any], stage_id: str, outcomes: dict[str, str]) -> tuple[list[str], list[str]]:
    """(blocking, warnings) of a checklist with `outcomes` at `stage_id`: the block rule's modes,
    and the modes an earlier stage carried over here whose outcome is not the clear one."""
    spec = declared(t)
    assert spec is not None
    order = mode_ids(spec)
    carried = set((state.get("failure_modes_carried") or {}).get(stage_id, []))
    blocked = set(_hits(spec["block"], outcomes, order))
    blocked |= {m for m in carried if outcomes.get(m) != spec["clear"]}
    blocking = [m for m in order if m in blocked]
    warnings = [m for m in _hits(spec.get("warn", []), outcomes, order) if m not in blocked]
    return blocking, warnings


def standing(record: dict[str, Any]) -> list[str]:
    """The modes of the stage's checklist that block it still (blocking, not overridden)."""
    check = record.get("failure_modes") or {}
    overridden = check.get("overridden") or {}
    return [m for m in check.get("blocking") or [] if m not in overridden]


def acknowledgement_needed() -> str:
    """What a blocking checklist needs, in the caller's words."""
    return said("the user's acknowledgement of each blocking failure mode ({hint})", Hint("acknowledge"))


def moves_hint(t: Template, run_id: str, stage_id: str, modes: list[str]) -> str:
    spec = declared(t)
    assert spec is not None
    answers = "|".join(spec["answers"])
    if modes:
        return said("the user answers each: `{hint}`", Hint("acknowledge", {
            "run_id": run_id, "stage": stage_id, "mode": Placeholder("MODE"), "answer": Placeholder(answers)}))
    return said("record it: `{hint}`", Hint("checklist", {"run_id": run_id, "stage": stage_id,
                                                          "item": Placeholder("MODE=OUTCOME...")}))


def completion_refusal(t: Template, state: dict[str, Any], stage_id: str,
                       record: dict[str, Any]) -> FailureModeBlock | None:
    """Why the stage may not complete as its checklist stands (None: it may). Read from the
    run's template alone: no run setting, flag or actor enters here."""
    if not carries(t, stage_id):
        return None
    spec = declared(t)
    assert spec is not None
    run_id = state.get("run_id") or "RUN"
    if not record.get("failure_modes"):
        return FailureModeBlock(
            f"stage {t.display(stage_id)} cannot complete: no failure-mode checklist is recorded for it; "
            + moves_hint(t, run_id, stage_id, []), stage=stage_id, blocking=[],
            needs=[said("the failure-mode checklist ({hint})", Hint("checklist"))])
    modes = standing(record)
    if not modes:
        return None
    return FailureModeBlock(
        f"stage {t.display(stage_id)} cannot complete: its failure-mode checklist blocks on mode"
        f"{'s' if len(modes) > 1 else ''} {named(spec, modes)}; " + moves_hint(t, run_id, stage_id, modes),
        stage=stage_id, blocking=modes, answers=list(spec["answers"]),
        needs=[acknowledgement_needed()])


def audit(t: Template, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """`failure_mode_audit` of `show --format ars`: per mode its final status at the last stage
    carrying the checklist (clear or overridden; null while none is final), its history (stage,
    outcome, when) and the user's answers with their reasons. None where the template has no checklist."""
    spec = declared(t)
    if not spec:
        return None
    last = spec["stages"][-1]
    final = spec.get("final") or {}
    out: dict[str, Any] = {}
    for mode in spec["modes"]:
        mid = str(mode["id"])
        history, answers, status = [], [], None
        for e in entries:
            if e.get("event") == "checklist" and mid in (e.get("outcomes") or {}):
                history.append({"stage": e.get("stage"), "outcome": e["outcomes"][mid], "at": e.get("at"),
                                **({"evidence": e["evidence"][mid]} if mid in (e.get("evidence") or {}) else {})})
                if e.get("stage") == last:
                    status = final.get("clear") if mid not in (e.get("blocking") or []) else None
            elif e.get("event") == "acknowledgement" and e.get("mode") == mid:
                answers.append({k: e.get(k) for k in ("stage", "answer", "reason", "at", "override_round",
                                                      "answered_by") if e.get(k) is not None})
                if e.get("stage") == last and spec["answers"].get(e.get("answer")) == CLEAR:
                    status = final.get("overridden")
                elif e.get("stage") == last and spec["answers"].get(e.get("answer")) == BACK:
                    status = None
        out[mid] = {"name": mode["name"], "final_status": status, "history": history, "acknowledgements": answers,
                    "override_reasons": [a["reason"] for a in answers
                                         if spec["answers"].get(a.get("answer")) == CLEAR and a.get("reason")]}
    return {"stage": last, "modes": out}

"""The failure-mode checklist's transitions: `checklist` (the integrity agent's outcomes for
every mode at once) and `acknowledge_mode` (the user's answer to one blocking mode: the CLI's
`acknowledge`). Pure, like rules.py: each returns the Change or raises the refusal; every mode,
outcome, answer and target is the template's (statedir.engine.failure_modes)."""
from __future__ import annotations

from typing import Any

from statedir.engine import failure_modes as fm
from statedir.engine.rules import gates
from statedir.engine.rules.stage_graph import start
from statedir.engine.run_shape import new_stage
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, Request, RunData, RunDraft, active_current
from statedir.errors import FailureModeBlock, IllegalTransition, InvalidValue
from statedir.hints import opt


def _spec(t: Template, stage_id: str) -> dict[str, Any]:
    spec = fm.declared(t)
    if not spec or stage_id not in spec["stages"]:
        where = f" (it is taken at {', '.join(t.display(s) for s in spec['stages'])})" if spec else \
            f" (template {t.name} {t.doc.get('version')} declares none)"
        raise InvalidValue(f"stage {t.display(stage_id)} takes no failure-mode checklist{where}", stage=stage_id)
    return spec


def pairs(values: Any, what: str, modes: list[str], allowed: list[str] | None = None) -> dict[str, str]:
    """`["1=CLEAR", ...]` (or a mapping) as {mode: value}, each mode known and named once, each
    value one `allowed` lists; INVALID_VALUE naming what is allowed otherwise."""
    items = list(values.items()) if isinstance(values, dict) else []
    if not isinstance(values, dict):
        for value in values or []:
            key, eq, rest = str(value).partition("=")
            if not eq:
                raise InvalidValue(f"--{what} {value!r} is not MODE=VALUE (modes {', '.join(modes)})", argument=what)
            items.append((key.strip(), rest.strip()))
    out: dict[str, str] = {}
    for key, value in items:
        key = str(key)
        if key not in modes:
            raise InvalidValue(f"--{what}: unknown mode {key!r}; the modes are {', '.join(modes)}", argument=what,
                               mode=key, allowed=modes)
        if key in out:
            raise InvalidValue(f"--{what}: mode {key} is named twice", argument=what, mode=key)
        if allowed is not None and value not in allowed:
            raise InvalidValue(f"--{what} {key}={value}: unknown outcome {value!r}; use one of {', '.join(allowed)}",
                               argument=what, outcome=value, allowed=allowed)
        if not str(value).strip():
            raise InvalidValue(f"--{what} {key}= is empty", argument=what, mode=key)
        out[key] = str(value)
    return out


def checklist(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """Every mode's outcome at once; a new checklist replaces a blocking one only once the user
    has answered each of its blocking modes (an override, or a revise asking for this one)."""
    assert stage_id is not None
    spec = _spec(t, stage_id)
    modes = fm.mode_ids(spec)
    outcomes = pairs(req.args.get("items"), "item", modes, list(spec["outcomes"]))
    missing = [m for m in modes if m not in outcomes]
    if missing:
        raise InvalidValue(f"a checklist records every mode at once: mode{'s' if len(missing) > 1 else ''} "
                           f"{fm.named(spec, missing)} missing ({opt('item')} MODE=OUTCOME; outcomes "
                           f"{', '.join(spec['outcomes'])})", argument="item", missing=missing, allowed=modes)
    evidence = pairs(req.args.get("evidence"), "evidence", modes)
    record = active_current(t, run, stage_id, "a failure-mode checklist")
    unanswered = [m for m in fm.standing(record)
                  if spec["answers"].get((record["failure_modes"].get("answers") or {}).get(m)) != fm.KEEP]
    if unanswered:
        raise FailureModeBlock(
            f"the checklist of stage {t.display(stage_id)} blocks on {fm.named(spec, unanswered)}: no new checklist "
            f"replaces it before the user answers; {fm.moves_hint(t, run.run_id, stage_id, unanswered)}",
            stage=stage_id, blocking=unanswered, answers=list(spec["answers"]),
            needs=[fm.acknowledgement_needed()])
    draft = RunDraft(run)
    blocking, warnings = fm.judged(t, draft.state, stage_id, outcomes)
    ordered = {m: outcomes[m] for m in modes}
    draft.stage(stage_id)["failure_modes"] = {"at": now, "outcomes": ordered, "evidence": evidence,
                                              "blocking": blocking, "warnings": warnings, "answers": {},
                                              "overridden": {}}
    for rule in spec.get("carry_over", []):
        found = [m for m in modes if rule["from"] == stage_id and outcomes[m] in rule["outcomes"]]
        if found:
            carried = draft.state.setdefault("failure_modes_carried", {})
            carried[rule["to"]] = [m for m in modes if m in set(carried.get(rule["to"], [])) | set(found)]
    draft.log("failure_modes", {"at": now, "stage": stage_id, "event": "checklist", "outcomes": ordered,
                                "evidence": evidence, "blocking": blocking, "warnings": warnings})
    said = (f"blocks on mode{'s' if len(blocking) > 1 else ''} {fm.named(spec, blocking)}: the user answers each "
            "(statedir acknowledge)" if blocking else "does not block")
    change = draft.change(f"checklist {t.display(stage_id)}: {said}", now, blocks=bool(blocking),
                          blocking=blocking, warned=warnings)
    if warnings:
        change.result["warning"] = (f"insufficient evidence for {fm.named(spec, warnings)}: a warning, not a block"
                                    + ("; checked again at " + ", ".join(t.display(s) for s in spec["stages"][1:])
                                       if spec["stages"][-1] != stage_id else ""))
    return change


def acknowledge_mode(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """The user's answer to one blocking mode: back to the template's `on_confirm` stage (every
    stage from there to this one reset), cleared for this stage with a reason under the override
    ladder, or kept blocking until a new checklist."""
    assert stage_id is not None
    spec = _spec(t, stage_id)
    mode, answer = str(req.args.get("mode")), req.args.get("answer")
    if answer not in spec["answers"]:
        raise InvalidValue(f"unknown answer {answer!r}; use one of {', '.join(spec['answers'])}", answer=answer,
                           allowed=list(spec["answers"]))
    if mode not in fm.mode_ids(spec):
        raise InvalidValue(f"unknown mode {mode!r}; the modes are {fm.named(spec, fm.mode_ids(spec))}", mode=mode,
                           allowed=fm.mode_ids(spec))
    record = active_current(t, run, stage_id, "an acknowledgement")
    blocking = fm.standing(record)
    if mode not in blocking:
        said = f"the modes that block are {', '.join(blocking)}" if blocking else "no mode blocks it"
        raise IllegalTransition(f"mode {fm.named(spec, [mode])} does not block stage {t.display(stage_id)} "
                                f"({said}); only a blocking mode is acknowledged", stage=stage_id, mode=mode,
                                blocking=blocking)
    effect, draft = spec["answers"][answer], RunDraft(run)
    entry: dict[str, Any] = {"at": now, "stage": stage_id, "event": "acknowledgement", "mode": mode,
                             "answer": answer, "reason": req.reason}
    if effect == fm.CLEAR:
        if not (req.reason or "").strip():
            raise InvalidValue(f"an override of mode {mode} needs a reason ({opt('reason')})", argument="reason")
        entry["override_round"] = gates.check_reason(t, run.state, stage_id, req.reason, "an override")
        gates.climb(draft.state, stage_id)
    rec = draft.stage(stage_id)
    check = rec["failure_modes"]
    check["answers"] = {**(check.get("answers") or {}), mode: answer}
    if effect == fm.CLEAR:
        check["overridden"] = {**(check.get("overridden") or {}), mode: req.reason}
    summary = f"acknowledge {t.display(stage_id)} mode {mode} {answer}"
    if effect == fm.BACK:
        entry["sent_to"] = target = spec["on_confirm"]
        _send_back(t, draft, target, stage_id, now)
        summary += f": back to stage {t.display(target)}"
    draft.log("failure_modes", {**entry, **gates.users_answer(req)})
    still = fm.standing(draft.view(stage_id)) if effect != fm.BACK else []
    return draft.change(summary, now, mode=mode, answer=answer, blocking=still,
                        **({"override_round": entry["override_round"]} if "override_round" in entry else {}))


def _send_back(t: Template, draft: RunDraft, target: str, current: str, now: str) -> None:
    """Every stage from `target` to `current` reset, as a reject's edge resets them; `target` starts."""
    for stage_id in t.stage_ids[t.index(target):t.index(current) + 1]:
        draft.stages[stage_id] = new_stage(t, stage_id)
    start(t, draft, target, now)

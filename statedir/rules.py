"""Pure transition decisions over plain data: `decide(template, run, request, now) -> Change`.

Every function here either returns the Change to persist or raises the refusal; none touches
a file, the clock or git. Stage-specific behaviour comes from the template, never from ids.
"""
from __future__ import annotations

import re
from typing import Any

from statedir import conditions, ledger, reports
from statedir.change import Change, Draft, Request, RunData, require_live, require_permission
from statedir.errors import (IllegalTransition, ImmutableField, InvalidValue, PrerequisitesMissing)
from statedir.runs import new_stage
from statedir.template import Template

TURNS_RE = re.compile(r"^#?(\d+)\.\.#?(\d+)$")


def decide(t: Template, run: RunData, req: Request, now: str) -> Change:
    """The one entry point: permission, liveness, then the action's own rules."""
    handler = HANDLERS[req.action]
    stage_id = t.resolve_stage(req.args["stage"]) if req.args.get("stage") not in (None, "pipeline") else None
    if req.action != "observe":
        require_permission(t, req.actor, req.action, stage_id)
    if req.action != "seal":
        require_live(t, run.state)
    return handler(t, run, req, now, stage_id)


# --- helpers ------------------------------------------------------------------------------------
def _closed(t: Template, record: dict[str, Any]) -> bool:
    return record["status"] in {t.status["done"], t.status.get("skipped")}


def _set_turns(t: Template, record: dict[str, Any], turns: str | None) -> None:
    if turns is None:
        return
    match = TURNS_RE.match(turns.strip())
    if not match or int(match[1]) > int(match[2]):
        raise InvalidValue(f"--turns {turns!r} must look like '#A..#B' with A <= B", turns=turns)
    ref = f"turns #{match[1]}..#{match[2]}"
    if _closed(t, record) and record.get("dialogue_log_ref") not in (None, ref):
        raise ImmutableField(f"dialogue_log_ref of stage {record['id']} is fixed once the stage closed "
                             f"({record['dialogue_log_ref']})", field="dialogue_log_ref")
    record["dialogue_log_ref"] = ref


def _start(t: Template, draft: Draft, stage_id: str, now: str) -> dict[str, Any]:
    """Make `stage_id` the active current stage, after the material gap check."""
    report = conditions.prerequisites(t, draft.state, draft.all_stages(), stage_id)
    if not report["prerequisites_met"]:
        raise PrerequisitesMissing(f"stage {t.display(stage_id)} needs {', '.join(report['missing_required'])}",
                                   **report)
    record = draft.stage(stage_id)
    record.update(status=t.status["active"], started_at=record.get("started_at") or now)
    draft.state.update(current_stage=stage_id, pipeline_state=t.pipeline["running"], checkpoint=None)
    return report


def _move_allowed(t: Template, record: dict[str, Any], target: str) -> None:
    current = record["status"]
    if target not in t.moves.get(current, []):
        hint = " (reopen it with `statedir redo`)" if current == t.status["done"] else ""
        raise IllegalTransition(f"stage {record['id']} cannot go from {current} to {target}{hint}",
                                stage=record["id"], status=current, requested=target)


# --- stage: update_stage ------------------------------------------------------------------------
def stage(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    assert stage_id is not None
    args, draft = req.args, Draft(run)
    target = args["status"]
    if target not in t.statuses:
        raise InvalidValue(f"unknown status {target!r}; use one of {', '.join(t.statuses)}", status=target)
    record = draft.stage(stage_id)
    state = draft.state
    if state["pipeline_state"] == t.pipeline["paused"]:
        raise IllegalTransition("the pipeline is paused; resume it with `statedir pipeline RUN running`")
    extra = _stage_details(t, record, args, req.reason)
    if target == record["status"]:
        if not extra:
            raise IllegalTransition(f"stage {t.display(stage_id)} is already {target}", stage=stage_id)
        if _closed(t, run.stages[stage_id]) and extra - {"dialogue_log_ref"}:
            raise ImmutableField(f"stage {t.display(stage_id)} is closed; its {', '.join(sorted(extra))} "
                                 "cannot change", stage=stage_id)
        return draft.change(f"stage {t.display(stage_id)}: {', '.join(sorted(extra))} updated", now)
    _move_allowed(t, run.stages[stage_id], target)
    warning = None
    if target == t.status["active"]:
        if stage_id != state["current_stage"]:
            raise IllegalTransition(f"stage {t.display(stage_id)} is not the current stage "
                                    f"({t.display(state['current_stage'])}); move on with `statedir confirm`")
        if state["pipeline_state"] not in (t.pipeline["initial"], t.pipeline["running"]):
            raise IllegalTransition(f"the pipeline is {state['pipeline_state']}; answer the checkpoint with "
                                    "`statedir confirm` first")
        warning = _start(t, draft, stage_id, now)["warning"]
    elif target == t.status["done"]:
        _complete(t, draft, stage_id, req, now)
    elif target == t.status.get("skipped"):
        if not t.skippable(stage_id):
            raise IllegalTransition(f"stage {t.display(stage_id)} can never be skipped", stage=stage_id)
        if stage_id == state["current_stage"]:
            raise IllegalTransition(f"stage {t.display(stage_id)} is the current stage; it cannot be skipped")
        record["reason"] = req.reason or record.get("reason")
    elif target == t.status.get("blocked"):
        record["reason"] = req.reason or record.get("reason")
    record["status"] = target
    change = draft.change(f"stage {t.display(stage_id)} {target}", now)
    if warning:
        change.result["warning"] = warning
    return change


def _stage_details(t: Template, record: dict[str, Any], args: dict[str, Any], reason: str | None) -> set[str]:
    """Apply --mode/--output/--decision/--turns; returns the fields that changed."""
    before = dict(record)
    spec = t.stage(record["id"])
    if args.get("mode") is not None:
        record["mode"] = args["mode"]
    if args.get("outputs"):
        record["outputs"] = [*record["outputs"], *args["outputs"]]
    if args.get("decision") is not None:
        values = spec.get("decision", {}).get("values")
        if not values:
            raise InvalidValue(f"stage {t.display(record['id'])} takes no decision", stage=record["id"])
        if args["decision"] not in values:
            raise InvalidValue(f"decision {args['decision']!r} is not one of {', '.join(values)}")
        record["decision"] = args["decision"]
    _set_turns(t, record, args.get("turns"))
    return {k for k in record if record[k] != before.get(k)}


def _complete(t: Template, draft: Draft, stage_id: str, req: Request, now: str) -> None:
    state, record, spec = draft.state, draft.stage(stage_id), t.stage(stage_id)
    if "terminal_ack" in spec:
        raise IllegalTransition(f"stage {t.display(stage_id)} ends with the terminal acknowledgement: "
                                "`statedir confirm RUN --response done`")
    if state["pipeline_state"] != t.pipeline["running"]:
        raise IllegalTransition(f"the pipeline is {state['pipeline_state']}, not running")
    integrity = spec.get("integrity")
    if integrity and req.reason and record.get("retry_count", 0) >= integrity["retry_cap"]:
        record["fail_loop_decision"] = req.reason
    if integrity and record.get("fail_loop_decision") and integrity.get("verifies"):
        # The user's recorded decision carries the draft on, "partially unverified": its passport
        # keeps its status, but the next stage may start.
        state["materials"][integrity["verifies"]] = True
    if not conditions.all_hold(spec.get("completion", []), record, state):
        raise IllegalTransition(f"stage {t.display(stage_id)} cannot complete: "
                                f"{spec.get('completion_message') or conditions.describe(spec['completion'])}",
                                stage=stage_id)
    kind, awareness = conditions.checkpoint_type(t, state, stage_id)
    record.update(completed_at=now, schema_validated=True, checkpoint_type=kind, checkpoint_confirmed=False)
    choices = [e["to"] for e in t.edges_from(stage_id) if conditions.all_hold(e.get("when", []), record, state)]
    defaults = [e["to"] for e in t.edges_from(stage_id) if e.get("default") and e["to"] in choices]
    default = choices[0] if len(choices) == 1 else (defaults[0] if defaults else None)
    state.update(pipeline_state=t.pipeline["awaiting"], checkpoints_opened=state.get("checkpoints_opened", 0) + 1,
                 checkpoint={"stage": stage_id, "type": kind, "opened_at": now, "awareness_prompt": awareness,
                             "choices": choices, "default": default, "terminal": False})
    draft.log("checkpoints", {"at": now, "event": "opened", "stage": stage_id, "type": kind,
                              "awareness_prompt": awareness, "response": None, "next": default})
    if kind == "FULL" and (state.get("settings", {}).get("reset_boundaries") or req.args.get("reset_boundaries")):
        ledger.append_boundary(t, draft, stage_id, choices, default, now)


# --- confirm: answer the open checkpoint ----------------------------------------------------------
def confirm(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    draft = Draft(run)
    state = draft.state
    response = req.args.get("response")
    policy = t.checkpoints
    if response is not None and response not in policy.get("responses", []):
        raise InvalidValue(f"unknown response {response!r}; use one of {', '.join(policy.get('responses', []))}")
    current = state["current_stage"]
    ack = t.stage(current).get("terminal_ack") if current else None
    if ack and run.stages[current]["status"] == t.status["active"]:
        return _terminal_ack(t, draft, current, ack, response, now)
    checkpoint = state.get("checkpoint")
    if state["pipeline_state"] != t.pipeline["awaiting"] or not checkpoint:
        raise IllegalTransition(f"no checkpoint is open (the pipeline is {state['pipeline_state']})")
    if checkpoint["type"] == "MANDATORY" and response not in policy.get("mandatory_responses", []):
        raise IllegalTransition("a MANDATORY checkpoint is never passed automatically: answer it with "
                                "--response continue (or review)", checkpoint=checkpoint)
    response = response or "continue"
    target = _choose(t, run, checkpoint, req.args.get("next"))
    _advance(t, draft, checkpoint["stage"], target, now)
    if response in policy.get("continue_responses", []):
        state["consecutive_continue_count"] = state.get("consecutive_continue_count", 0) + 1
        if response == policy.get("slim_after"):
            state["slim_checkpoints"] = True
    elif response in policy.get("review_responses", []):
        state.update(consecutive_continue_count=0, slim_checkpoints=False)
    draft.stage(checkpoint["stage"])["checkpoint_confirmed"] = True
    draft.log("checkpoints", {"at": now, "event": "answered", "stage": checkpoint["stage"],
                              "type": checkpoint["type"], "awareness_prompt": checkpoint["awareness_prompt"],
                              "response": response, "next": target})
    schemas = t.stage(checkpoint["stage"]).get("schemas_checked", [])
    draft.log("schema_validation", {"transition": f"{t.display(checkpoint['stage'])} -> {_shown(t, target)}",
                                    "schemas_checked": schemas, "result": "PASS", "missing_fields": [],
                                    "timestamp": now})
    change = draft.change(f"confirm stage {t.display(checkpoint['stage'])} -> {_shown(t, target)} ({response})",
                          now, next=target)
    return change


def _shown(t: Template, target: str) -> str:
    return target if target in t.terminal_targets else t.display(target)


def _choose(t: Template, run: RunData, checkpoint: dict[str, Any], requested: str | None) -> str:
    source, choices = checkpoint["stage"], checkpoint["choices"]
    if requested is None:
        if checkpoint.get("default"):
            return str(checkpoint["default"])
        if not choices:
            raise IllegalTransition(f"no stage follows stage {t.display(source)} as it stands: "
                                    + "; ".join(f"{_shown(t, e['to'])} needs {conditions.describe(e['when'])}"
                                                for e in t.edges_from(source) if e.get("when")))
        raise InvalidValue(f"the graph offers a choice after stage {t.display(source)}: pass --next "
                           + " or --next ".join(_shown(t, c) for c in choices), choices=choices)
    target = requested if requested in t.terminal_targets else t.resolve_stage(requested)
    if target in choices:
        return target
    if t.prohibited(source, target):
        raise IllegalTransition(f"{t.display(source)} -> {_shown(t, target)} is prohibited", source=source,
                                target=target)
    edges = [e for e in t.edges_from(source) if e["to"] == target]
    if edges:
        raise IllegalTransition(f"{t.display(source)} -> {_shown(t, target)} needs "
                                f"{conditions.describe(edges[0].get('when', []))}", source=source, target=target)
    raise IllegalTransition(f"the stage graph does not lead from {t.display(source)} to {_shown(t, target)}",
                            source=source, target=target, choices=choices)


def _advance(t: Template, draft: Draft, source: str, target: str, now: str) -> None:
    edge = next(e for e in t.edges_from(source) if e["to"] == target)
    reason = edge.get("reason", "").replace("{decision}", str(draft.view(source).get("decision")))
    for stage_id in edge.get("skip", []):
        if draft.view(stage_id)["status"] == t.status["initial"]:
            draft.stage(stage_id).update(status=t.status["skipped"], reason=reason or None)
    for stage_id in edge.get("reset", []):
        draft.stages[stage_id] = new_stage(t, stage_id)
    if target in t.terminal_targets:
        draft.state.update(pipeline_state=target, checkpoint=None)
        return
    _start(t, draft, target, now)


def _terminal_ack(t: Template, draft: Draft, stage_id: str, ack: dict[str, Any], response: str | None,
                  now: str) -> Change:
    if response is None:
        raise InvalidValue(f"stage {t.display(stage_id)} is awaiting the terminal acknowledgement: "
                           f"--response {ack['responses'][0]} ends the run")
    done = response in ack["responses"]
    if done:
        draft.stage(stage_id).update(status=t.status["done"], completed_at=now, checkpoint_confirmed=True)
        draft.state.update(pipeline_state=t.pipeline["completed"], checkpoint=None)
    draft.log("checkpoints", {"at": now, "event": "answered", "stage": stage_id, "type": "FULL",
                              "awareness_prompt": False, "response": response,
                              "next": t.pipeline["completed"] if done else None})
    summary = (f"stage {t.display(stage_id)} acknowledged: pipeline completed" if done
               else f"stage {t.display(stage_id)}: response {response}, still in progress")
    return draft.change(summary, now)


# --- pipeline: update_pipeline_state --------------------------------------------------------------
def pipeline(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    draft = Draft(run)
    state, target, p = draft.state, req.args["state"], t.pipeline
    current = state["pipeline_state"]
    if target not in p.values():
        raise InvalidValue(f"unknown pipeline state {target!r}; use one of {', '.join(p.values())}")
    if target == current:
        raise IllegalTransition(f"the pipeline is already {current}")
    if target == p["paused"]:
        state.update(pipeline_state=target, paused_from=current)
    elif target == p["running"] and current == p["paused"]:
        state.update(pipeline_state=state.get("paused_from") or p["running"], paused_from=None)
    elif target == p["aborted"]:
        state.update(pipeline_state=target, paused_from=None, checkpoint=None)
    elif target == p["completed"]:
        last = t.stage_ids[-1]
        if run.stages[last]["status"] not in (t.status["done"], t.status.get("skipped")):
            raise IllegalTransition(f"completed requires stage {t.display(last)} completed or skipped")
        state.update(pipeline_state=target, checkpoint=None)
    else:
        raise IllegalTransition(f"the pipeline cannot be set {current} -> {target} directly; "
                                "statedir sets it as stages start, complete and are confirmed")
    return draft.change(f"pipeline {current} -> {state['pipeline_state']}", now)


# --- set: request_update for run-level fields ------------------------------------------------------
def set_field(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    draft = Draft(run)
    field, value = req.args["field"], req.args["value"]
    if field in ("run_id", "template", "created_at"):
        raise ImmutableField(f"{field} is set at creation and never changes", field=field)
    if field in ("topic", "language"):
        if not value.strip():
            raise InvalidValue(f"{field} must not be empty")
        draft.state[field] = value
    elif field.startswith("team.") and field[5:] in draft.state.get("team", {}):
        draft.state["team"][field[5:]] = value or None
    elif field == "settings.reset_boundaries":
        if value.lower() not in ("true", "false"):
            raise InvalidValue("settings.reset_boundaries takes true or false")
        draft.state.setdefault("settings", {})["reset_boundaries"] = value.lower() == "true"
    else:
        team = ", ".join(f"team.{r}" for r in draft.state.get("team", {}))
        raise InvalidValue(f"{field!r} cannot be set; settable: topic, language, settings.reset_boundaries"
                           + (f", {team}" if team else ""), field=field)
    if draft.state == run.state:
        raise IllegalTransition(f"{field} already has that value")
    return draft.change(f"set {field}", now)


# --- redo: the one way back from completed -------------------------------------------------------
def redo(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    assert stage_id is not None
    draft = Draft(run)
    if run.stages[stage_id]["status"] != t.status["done"]:
        raise IllegalTransition(f"stage {t.display(stage_id)} is {run.stages[stage_id]['status']}; "
                                "redo reopens a completed stage")
    for later in t.stage_ids[t.index(stage_id) + 1:]:
        if run.stages[later]["status"] != t.status["initial"]:
            draft.stages[later] = new_stage(t, later)
    draft.stages[stage_id] = {**new_stage(t, stage_id), "reason": req.reason,
                              "started_at": now, "status": t.status["active"]}
    draft.state.update(current_stage=stage_id, pipeline_state=t.pipeline["running"], checkpoint=None,
                       paused_from=None)
    bumped = reports.bump_versions(t, draft, t.stage(stage_id).get("produces", []), now, req.actor)
    return draft.change(f"redo stage {t.display(stage_id)}", now, bumped=bumped)


HANDLERS = {
    "stage": stage, "confirm": confirm, "pipeline": pipeline, "set": set_field, "redo": redo,
    "output": reports.output, "material": reports.material, "integrity": reports.integrity,
    "revision": reports.revision, "loop": reports.loop, "observe": reports.observe, "seal": reports.seal,
    "resume": ledger.resume,
}

"""The stage graph: answering a checkpoint moves the run along an edge the template declares."""
from __future__ import annotations

from typing import Any

from statedir.engine import attribution, checkpoint_dashboard, checkpoint_decisions, receipts, schema_checks
from statedir.engine.rules import entry_advisories
from statedir.engine.run_shape import new_stage
from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.transition_data import Change, Request, RunData, RunDraft
from statedir.errors import IllegalTransition, InvalidValue, PrerequisitesMissing
from statedir.hints import opt


def start(t: Template, draft: RunDraft, stage_id: str, now: str) -> dict[str, Any]:
    """Make `stage_id` the active current stage, after the material gap check."""
    report = template_conditions.prerequisites(t, draft.state, draft.all_stages(), stage_id)
    if not report["prerequisites_met"]:
        unmet = template_conditions.unmet_requirements(t, draft.state, draft.all_stages(), stage_id)
        raise PrerequisitesMissing(f"stage {t.display(stage_id)} needs {', '.join(report['missing_required'])}",
                                   **report, needs=report["missing_required"],
                                   materials=[names for _, names in unmet])
    if t.doc.get("entry_advisories"):  # a gated advisory (a run setting's) on entering its stage
        entry_advisories.require_entry(t, RunData(draft.run.run_id, draft.state, draft.all_stages(),
                                                  draft.run.passports), stage_id)
    record = draft.stage(stage_id)
    if t.status["active"] not in t.moves.get(record["status"], []) and record["status"] != t.status["active"]:
        # a stage set skipped (or completed) never starts again by a move the template forbids
        raise IllegalTransition(f"stage {t.display(stage_id)} is {record['status']}; it cannot start "
                                f"({record['status']} -> {t.status['active']} is no move of template {t.name})",
                                stage=stage_id, status=record["status"])
    record.update(status=t.status["active"], started_at=record.get("started_at") or now)
    draft.state.update(current_stage=stage_id, pipeline_state=t.pipeline["running"], checkpoint=None)
    return report


def _acknowledgement(t: Template, run: RunData) -> dict[str, Any] | None:
    """The terminal acknowledgement the current stage awaits (None: none)."""
    current = run.state["current_stage"]
    ack = t.stage(current).get("terminal_ack") if current else None
    return ack if ack and run.stages[current]["status"] == t.status["active"] else None


def _open(t: Template, state: dict[str, Any]) -> dict[str, Any] | None:
    """The checkpoint an answer is taken at: open while the pipeline awaits it, or held (paused by
    the dashboard's quality: the user answers); None: none is open."""
    checkpoint = state.get("checkpoint")
    held = bool(checkpoint and checkpoint.get("held"))
    if not checkpoint or state["pipeline_state"] not in (t.pipeline["awaiting"], *held * [t.pipeline["paused"]]):
        return None
    return checkpoint


def _users_only(t: Template, checkpoint: dict[str, Any], response: str | None) -> bool:
    """A MANDATORY or held checkpoint takes only the user's answers (`mandatory_responses`)."""
    return (checkpoint["type"] == "MANDATORY" or bool(checkpoint.get("held"))) and \
        response not in t.checkpoints.get("mandatory_responses", [])


def answerable(t: Template, run: RunData, response: str | None) -> bool:
    """Whether `confirm` with `response` gets past its first refusals, none of which names a need
    (`statedir next` and the flow check ask no other): a terminal acknowledgement awaited, or a
    checkpoint open that takes the response."""
    if _acknowledgement(t, run) is not None:
        return True
    checkpoint = _open(t, run.state)
    return checkpoint is not None and not _users_only(t, checkpoint, response)


def confirm(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    response = req.args.get("response")
    policy = t.checkpoints
    ack = _acknowledgement(t, run)
    # the terminal acknowledgement takes its own words (done, finish, end, confirm) besides the checkpoints'
    known = list(dict.fromkeys([*policy.get("responses", []), *(ack["responses"] if ack else [])]))
    if response is not None and response not in known:
        raise InvalidValue(f"unknown response {response!r}; use one of {', '.join(known)}")
    if ack:
        return _terminal_ack(t, RunDraft(run), run.state["current_stage"], ack, response, now, _answered_by(req))
    checkpoint = _open(t, run.state)
    if checkpoint is None:
        raise IllegalTransition(f"no checkpoint is open (the pipeline is {run.state['pipeline_state']})")
    held = bool(checkpoint.get("held"))
    if _users_only(t, checkpoint, response):
        if checkpoint["type"] == "MANDATORY":
            raise IllegalTransition("a MANDATORY checkpoint is never passed automatically: answer it with "
                                    "{opt:response} continue (or review); the refused skip is recorded in the "
                                    "answer's receipt when it is given with {opt:skip_refused}",
                                    checkpoint=checkpoint, skip_refused=True)
        raise IllegalTransition(f"the checkpoint of stage {t.display(checkpoint['stage'])} is held (quality "
                                f"{checkpoint['held']}): the user answers it with {opt('response')} "
                                + " or {opt:response} ".join(policy.get("mandatory_responses", [])), checkpoint=checkpoint)
    receipts.check_request(t, checkpoint, req)
    dash = checkpoint_dashboard.parse(t, checkpoint, req.args)
    answer = checkpoint_decisions.parse(t, checkpoint, req.args, run.stages, run.state)
    picked = bool(answer) and checkpoint_decisions.decides(t, checkpoint, run.stages, run.state)
    if checkpoint_dashboard.holds(t, dash):
        draft = RunDraft(run)
        checkpoint_dashboard.record(draft, checkpoint["stage"], dash, now)
        return draft.change(checkpoint_dashboard.hold(t, draft, checkpoint, dash, now), now, held=dash["quality"])
    response = response or "continue"
    draft = RunDraft(run)  # decided from here on: the copies the change is made of
    if picked:  # the user's pick is the stage's decision, and the graph leads on from it
        assert answer is not None
        target = checkpoint_decisions.route(t, draft, checkpoint, answer)
    else:
        target = _choose(t, run, checkpoint, req.args.get("next"))
    state = draft.state
    if dash:
        checkpoint_dashboard.record(draft, checkpoint["stage"], dash, now)
    if answer and not picked and target in t.terminal_targets:
        checkpoint_decisions.record(t, draft, target, answer)  # refused: no stage to record it on
    state["paused_from"] = None if held else state.get("paused_from")
    checked = schema_checks.check(t, draft, checkpoint["stage"])  # the outputs as the stage left them
    report = _advance(t, draft, checkpoint["stage"], target, now)
    checkpoint_decisions.check_given(t, checkpoint, answer, target, run.stages, run.state)  # once the stage may start
    if answer and not picked:
        checkpoint_decisions.record(t, draft, target, answer)
    if response in policy.get("continue_responses", []):
        state["consecutive_continue_count"] = state.get("consecutive_continue_count", 0) + 1
        if response == policy.get("slim_after"):
            state["slim_checkpoints"] = True
    elif response in policy.get("review_responses", []):
        state.update(consecutive_continue_count=0, slim_checkpoints=False)
    draft.stage(checkpoint["stage"])["checkpoint_confirmed"] = True
    draft.log("checkpoints", {"at": now, "event": "answered", "stage": checkpoint["stage"],
                              "type": checkpoint["type"], "awareness_prompt": checkpoint["awareness_prompt"],
                              "response": response, "next": target, **_answered_by(req),
                              **({"dashboard": dash} if dash else {}),
                              **({"answer": dict([answer])} if answer else {}),
                              **({"round_trip": checkpoint["round_trip"]} if checkpoint.get("round_trip") else {})})
    receipts.write(t, draft, req, checkpoint, response, target, now, dict([answer]) if answer else None)
    if checked is None:  # a template naming no material schemas: the entry its runs always had
        checked = {"schemas_checked": t.stage(checkpoint["stage"]).get("schemas_checked", []), "result": "PASS",
                   "missing_fields": []}
    draft.log("schema_validation", {"transition": f"{t.display(checkpoint['stage'])} -> {_shown(t, target)}",
                                    **checked, "timestamp": now})
    picks = f"; decision {answer[1]}, the user's" if picked and answer else ""
    change = draft.change(f"confirm stage {t.display(checkpoint['stage'])} -> {_shown(t, target)} ({response}{picks})",
                          now, next=target)
    mismatch = schema_checks.warning(t, checkpoint["stage"], checked)
    if mismatch:  # the upstream State Tracker's "format mismatch -> notify": said, never a refusal
        change.result["warnings"] = [mismatch]
        change.result["schema_check"] = checked
    if report and report["warning"]:  # as `prereq` and `stage ... in_progress` say it
        change.result.update(warning=report["warning"], missing_recommended=report["missing_recommended"])
    return change


def users_question(t: Template, run: RunData) -> dict[str, Any] | None:
    """The open checkpoint only the user may answer (MANDATORY): its stage, the responses it takes
    and the stages `--next` may name (`default` where the graph leaves one); None where none is open
    (statedir.engine.attribution.users_checkpoint: a MANDATORY one, or one held until the user answers)."""
    checkpoint = attribution.users_checkpoint(t, run)
    if checkpoint is None:
        return None
    picks = checkpoint_decisions.decides(t, checkpoint, run.stages, run.state)  # the pick leads on, not --next
    return {"stage": checkpoint["stage"], "responses": list(t.checkpoints.get("mandatory_responses", [])),
            "choices": [] if picks else list(checkpoint["choices"]),
            "default": None if picks else checkpoint.get("default")}


def _answered_by(req: Request) -> dict[str, Any]:
    """Who answered, as the request says (the actor, or `user` where the user was asked); requests
    from before `answered_by` say nothing, and their entries replay without it."""
    return {"answered_by": req.args["answered_by"]} if req.args.get("answered_by") else {}


def _shown(t: Template, target: str) -> str:
    return target if target in t.terminal_targets else t.display(target)


def _choose(t: Template, run: RunData, checkpoint: dict[str, Any], requested: str | None) -> str:
    source, choices = checkpoint["stage"], checkpoint["choices"]
    if requested is None:
        if checkpoint.get("default"):
            return str(checkpoint["default"])
        if not choices:
            needs = [f"{_shown(t, e['to'])} needs {template_conditions.describe(e['when'])}"
                     for e in t.edges_from(source) if e.get("when")]
            raise IllegalTransition(f"no stage follows stage {t.display(source)} as it stands: " + "; ".join(needs),
                                    needs=needs)
        raise InvalidValue(f"the graph offers a choice after stage {t.display(source)}: pass {opt('next')} "
                           + " or {opt:next} ".join(_shown(t, c) for c in choices), choices=choices)
    target = requested if requested in t.terminal_targets else t.resolve_stage(requested)
    if target in choices:
        return target
    legal = ", ".join(_shown(t, c) for c in choices) or "none as it stands"
    if t.prohibited(source, target):
        raise IllegalTransition(f"{t.display(source)} -> {_shown(t, target)} is prohibited; {opt('next')} takes: {legal}",
                                source=source, target=target, choices=choices)
    edges = [e for e in t.edges_from(source) if e["to"] == target]
    if edges:
        need = template_conditions.describe(edges[0].get("when", []))
        raise IllegalTransition(f"{t.display(source)} -> {_shown(t, target)} needs {need}; {opt('next')} takes: {legal}",
                                source=source, target=target, choices=choices, needs=[need])
    raise IllegalTransition(f"the stage graph does not lead from {t.display(source)} to {_shown(t, target)}; "
                            f"{opt('next')} takes: {legal}", source=source, target=target, choices=choices)


def _advance(t: Template, draft: RunDraft, source: str, target: str, now: str) -> dict[str, Any] | None:
    """Move along the edge to `target`; the prerequisite report of the stage started (None at an end)."""
    edge = next(e for e in t.edges_from(source) if e["to"] == target)
    reason = edge.get("reason", "").replace("{decision}", str(draft.view(source).get("decision")))
    for stage_id in edge.get("skip", []):
        if draft.view(stage_id)["status"] == t.status["initial"]:
            draft.stage(stage_id).update(status=t.status["skipped"], reason=reason or None)
    for stage_id in edge.get("reset", []):
        draft.stages[stage_id] = new_stage(t, stage_id)
    if target in t.terminal_targets:
        draft.state.update(pipeline_state=target, checkpoint=None,
                           current_stage=edge.get("current_stage", draft.state["current_stage"]))
        return None
    return start(t, draft, target, now)


def _terminal_ack(t: Template, draft: RunDraft, stage_id: str, ack: dict[str, Any], response: str | None,
                  now: str, answered_by: dict[str, Any]) -> Change:
    if response is None:  # refused by the rules, as `stage ... completed` and a MANDATORY checkpoint are
        raise IllegalTransition(f"stage {t.display(stage_id)} is awaiting the terminal acknowledgement: "
                                f"{opt('response')} {ack['responses'][0]} ends the run", stage=stage_id,
                                responses=list(ack["responses"]))
    done = response in ack["responses"]
    if done:
        draft.stage(stage_id).update(status=t.status["done"], completed_at=now, checkpoint_confirmed=True)
        draft.state.update(pipeline_state=t.pipeline["completed"], checkpoint=None)
    draft.log("checkpoints", {"at": now, "event": "answered", "stage": stage_id, "type": "FULL",
                              "awareness_prompt": False, "response": response,
                              "next": t.pipeline["completed"] if done else None, **answered_by})
    summary = (f"stage {t.display(stage_id)} acknowledged: pipeline completed" if done
               else f"stage {t.display(stage_id)}: response {response}, still in progress")
    return draft.change(summary, now)

"""The run-level actions: `pipeline RUN STATE` and `set RUN FIELD VALUE` (`redo RUN STAGE`, the one
way back from a completed stage, is statedir.engine.rules.redo's). Pure, like every rule."""
from __future__ import annotations

from statedir.engine import run_settings
from statedir.engine.rules.stage_fields import set_stage_field
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, Request, RunData, RunDraft
from statedir.errors import IllegalTransition, ImmutableField, InvalidValue


# --- pipeline: update_pipeline_state --------------------------------------------------------------
def pipeline(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    draft = RunDraft(run)
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
    draft = RunDraft(run)
    field, value = req.args["field"], req.args["value"]
    run_settings.refuse_change(t, field)
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
    elif field.startswith("stages."):
        return set_stage_field(t, run, draft, field, value, now)
    else:
        team = ", ".join(f"team.{r}" for r in draft.state.get("team", {}))
        stage_fields = ", ".join(f"stages.STAGE.{name}" for name in t.doc.get("settable_stage_fields", []))
        older = "" if run_settings.declared(t) else ", settings.reset_boundaries"  # 3.21 runs' one setting
        raise InvalidValue(f"{field!r} cannot be set; settable: topic, language{older}"
                           + (f", {team}" if team else "") + (f", {stage_fields}" if stage_fields else ""), field=field)
    if draft.state == run.state:
        raise IllegalTransition(f"{field} already has that value")
    return draft.change(f"set {field}", now)

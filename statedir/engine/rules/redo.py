"""`redo RUN STAGE`: the one way back from a completed stage, reopening it and resetting every later
stage, its materials bumped to new versions. Pure, like every rule. Apart from the run-level actions
(statedir.engine.rules.run) because it needs submissions and new stages (statedir.engine.run_shape),
which a `set` does not load (tests/test_architecture.py)."""
from __future__ import annotations

from statedir.engine.rules import submissions
from statedir.engine.run_shape import new_stage
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, Request, RunData, RunDraft
from statedir.errors import IllegalTransition


def redo(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    assert stage_id is not None
    draft = RunDraft(run)
    if run.stages[stage_id]["status"] != t.status["done"]:
        raise IllegalTransition(f"stage {t.display(stage_id)} is {run.stages[stage_id]['status']}; "
                                "redo reopens a completed stage")
    reset = []
    for later in t.stage_ids[t.index(stage_id) + 1:]:
        if run.stages[later]["status"] != t.status["initial"]:
            reset.append({"stage": later, "was": run.stages[later]["status"]})
            draft.stages[later] = new_stage(t, later)
    draft.stages[stage_id] = {**new_stage(t, stage_id), "reason": req.reason,
                              "started_at": now, "status": t.status["active"]}
    draft.state.update(current_stage=stage_id, pipeline_state=t.pipeline["running"], checkpoint=None,
                       paused_from=None)
    bumped = submissions.bump_versions(t, draft, t.stage(stage_id).get("produces", []), now, req.actor,
                                       req.request_id)
    summary = f"redo stage {t.display(stage_id)}"
    if reset:  # say what went back, or an in-progress later stage silently becomes initial
        summary += "; reset to " + t.status["initial"] + ": " + ", ".join(
            f"stage {t.display(r['stage'])} (was {r['was']})" for r in reset)
    return draft.change(summary, now, bumped=bumped, reset=reset)

"""What a new request must meet beyond the transition rules: checks added after history was
written, applied where a request enters the transaction and never when history is replayed, so a
transition that was legal when it was made stays legal in `verify`."""
from __future__ import annotations

from statedir.engine.template import Template
from statedir.engine.transition_data import Request, RunData
from statedir.errors import IllegalTransition, InvalidValue, PermissionDenied

WRITER = "state_tracker"  # statedir itself, the sole writer: the State Tracker academic-research-skills documents


def refuse_writer(t: Template, actor: str) -> None:
    """No caller acts as statedir itself: PERMISSION_DENIED naming the roles that may act (older
    templates list it as a role; their history, replayed, keeps what it did)."""
    if actor == WRITER:
        roles = [role for role in t.roles if role != WRITER]
        raise PermissionDenied(f"{WRITER!r} is statedir itself, the writer: no caller acts as it; act as one of "
                               f"the roles of template {t.name}: {', '.join(roles)}", actor=actor, roles=roles)


def admit(t: Template, run: RunData, req: Request) -> None:
    """Refuse a new request these checks do not admit (before the rules decide it). An actor the
    template does not let take the action is left to the rules' PERMISSION_DENIED."""
    refuse_writer(t, req.actor)
    if not t.may(req.actor, req.action):
        return
    if req.action == "pipeline" and req.args.get("state") == t.pipeline["aborted"] and not (req.reason or "").strip():
        # Aborting ends a run for good: nothing undoes it.
        raise InvalidValue("aborting ends the run for good and nothing undoes it: a reason is required",
                           argument="reason")
    if req.action == "loop":
        current = run.state.get("current_stage")
        revising = [s["id"] for s in t.stages if "revision" in s]
        if revising and current not in revising:
            # A loop counts a revision round: at another stage it would use up the template's cap.
            here = f"stage {t.display(current)}" if current in t.stage_ids else "no stage yet"
            raise IllegalTransition(f"loop counts a revision round; the run is at {here}, "
                                    f"not at a stage that revises ({', '.join(t.display(s) for s in revising)})",
                                    stage=current, revising=revising)

"""Pure transition decisions over plain data: `decide(template, run, request, now) -> Change`, and
the table of the function that decides each action.

Every rule either returns the Change to persist or raises the refusal; none touches a file, the
clock or git. Stage-specific behaviour comes from the template, never from ids.
"""
# Lazy imports: each action's rules (the HANDLERS table, issue 36 point 3), the one per-action loader below the API:
#   `set` loads none of the other actions' rules; importing every action's rules (with the adjudication contract's
#   dataclasses and inspect) adds about 7 ms to a transition.
from __future__ import annotations

from collections.abc import Callable

from statedir.engine import stage_outputs
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, Request, RunData, require_live, require_permission

POST_TERMINAL = ("bind", "seal")  # the adjudication bindings follow the transition they record


def decide(t: Template, run: RunData, req: Request, now: str) -> Change | None:
    """The one entry point: permission, liveness, then the action's own rules (None: a
    repeated seal, nothing to change)."""
    handler = handler_for(req.action)
    stage_id = t.resolve_stage(req.args["stage"]) if req.args.get("stage") not in (None, "pipeline") else None
    if req.action != "observe":
        require_permission(t, req.actor, req.action, stage_id)
    if req.action not in POST_TERMINAL:
        require_live(t, run.state)
    free = stage_outputs.check(t, req.args, stage_id)  # outputs the template declares (or free ones, warned)
    change = handler(t, run, req, now, stage_id)
    if free and change is not None:
        change.result["warnings"] = [*change.result.get("warnings", []), free]
    return change


# Each action and the function that decides it, as a reference a reader and a tool can follow. An
# action's module is imported when that action is decided, not before: a CLI transition loads its own
# action's rules alone (importing every action's module costs about 7 ms, some 7% of a transition;
# tests/test_architecture.py holds that a transition loads no other action's rules).
def _stage():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import stage

    return stage


def _run():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import run

    return run


def _redo():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import redo

    return redo


def _stage_graph():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import stage_graph

    return stage_graph


def _submissions():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import submissions

    return submissions


def _adjudication():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import adjudication

    return adjudication


def _reset_boundaries():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import reset_boundaries

    return reset_boundaries


def _gates():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import gates

    return gates


def _checklist():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import checklist

    return checklist


def _review_contract():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import review_contract

    return review_contract


def _entry_advisories():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import entry_advisories

    return entry_advisories


def _compliance():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import compliance

    return compliance


def _inquiry():  # returns the module itself (its type inferred, so its functions are followed)
    from statedir.engine.rules import inquiry

    return inquiry


Handler = Callable[[Template, RunData, Request, str, "str | None"], "Change | None"]
HANDLERS: dict[str, Callable[[], Handler]] = {
    "stage": lambda: _stage().stage, "pipeline": lambda: _run().pipeline, "set": lambda: _run().set_field,
    "redo": lambda: _redo().redo,
    "confirm": lambda: _stage_graph().confirm,
    "output": lambda: _submissions().output, "material": lambda: _submissions().material,
    "integrity": lambda: _submissions().integrity, "revision": lambda: _submissions().revision,
    "loop": lambda: _submissions().loop, "observe": lambda: _submissions().observe,
    "bind": lambda: _adjudication().bind, "seal": lambda: _adjudication().seal,
    "resume": lambda: _reset_boundaries().resume,
    "resolve": lambda: _gates().resolve,
    "checklist": lambda: _checklist().checklist, "acknowledge_mode": lambda: _checklist().acknowledge_mode,
    "contract": lambda: _review_contract().record,
    "advisory": lambda: _entry_advisories().record,
    "compliance": lambda: _compliance().record, "compliance_override": lambda: _compliance().override,
    "inquiry": lambda: _inquiry().record,
}


def handler_for(action: str) -> Handler:
    """The function that decides `action` (its module imported on first use)."""
    return HANDLERS[action]()

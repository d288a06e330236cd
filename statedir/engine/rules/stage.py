"""`stage RUN STAGE STATUS`: a stage's status moves as the template lists them, its details (mode,
outputs, decision, turns), and completing it, which opens its checkpoint. Pure, like every rule."""
# Lazy imports: the rules only some stages' changes need (a stage's start, a review contract, failure modes,
#   compliance, the checkpoint dashboard and inquiry, a reset boundary): `set` and `stage X blocked` load none of them.
from __future__ import annotations

import re
from typing import Any

from statedir.engine import run_settings, schema_checks, stage_outputs
from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.template import prose as template_prose
from statedir.engine.transition_data import Change, Request, RunData, RunDraft
from statedir.errors import IllegalTransition, ImmutableField, InvalidValue
from statedir.hints import HINT, HINT2, Hint, Placeholder, opt

RUN = Placeholder("RUN")

TURNS_RE = re.compile(r"^#?(\d+)\.\.#?(\d+)$")


# --- helpers ------------------------------------------------------------------------------------
def _closed(t: Template, record: dict[str, Any]) -> bool:
    return record["status"] in {t.status["done"], t.status.get("skipped")}


def _set_turns(t: Template, record: dict[str, Any], turns: str | None) -> None:
    if turns is None:
        return
    match = TURNS_RE.match(turns.strip())
    if not match or int(match[1]) > int(match[2]):
        raise InvalidValue(f"{opt('turns')} {turns!r} must look like '#A..#B' with A <= B", turns=turns)
    ref = f"turns #{match[1]}..#{match[2]}"
    if _closed(t, record) and record.get("dialogue_log_ref") not in (None, ref):
        raise ImmutableField(f"dialogue_log_ref of stage {record['id']} is fixed once the stage closed "
                             f"({record['dialogue_log_ref']})", field="dialogue_log_ref")
    record["dialogue_log_ref"] = ref


def move_listed(t: Template, current: str, target: str) -> bool:
    """Whether the template's status moves take a stage from `current` to `target` (a stage
    asked for another status is refused without more)."""
    return target in t.moves.get(current, [])


def _move_allowed(t: Template, record: dict[str, Any], target: str) -> None:
    current = record["status"]
    if not move_listed(t, current, target):
        moves, done = t.moves.get(current, []), current == t.status["done"]  # what is allowed, named
        how = f" (reopen it with `{HINT}`)" if done else f"; it goes to {' or '.join(moves)}"
        raise IllegalTransition(f"stage {record['id']} cannot go from {current} to {target}{how}",
                                stage=record["id"], status=current, requested=target, allowed=list(moves),
                                hint=Hint("redo") if done else None)


# --- stage: update_stage ------------------------------------------------------------------------
def stage(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    assert stage_id is not None
    args, draft = req.args, RunDraft(run)
    target = args["status"]
    if target not in t.statuses:
        raise InvalidValue(f"unknown status {target!r}; use one of {', '.join(t.statuses)}", status=target)
    record = draft.stage(stage_id)
    state = draft.state
    if state["pipeline_state"] == t.pipeline["paused"]:
        raise IllegalTransition("the pipeline is paused; resume it with `{hint}`",
                                hint=Hint("pipeline", {"run_id": RUN, "state": "running"}))
    extra = _stage_details(t, record, args, req.reason, state)
    if target == record["status"]:
        if not extra and target == t.status["active"] and stage_id == state["current_stage"]:
            # `confirm` already started it: an agent that starts it again is told, not refused
            return Change(f"stage {t.display(stage_id)} is already {target} (the current stage); nothing changed",
                          noop=True)
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
            current = state["current_stage"]
            finish = Hint("stage", {"run_id": state["run_id"], "stage": current, "status": t.status["done"]})
            done = run.stages[current]["status"] == t.status["done"]
            how = f"move on with `{HINT}`" if done else f"complete it first (`{HINT2}`), then move on with `{HINT}`"
            raise IllegalTransition(f"stage {t.display(stage_id)} is not the current stage "
                                    f"({t.display(current)}); {how}", stage=stage_id,
                                    hint=[Hint("confirm")] if done else [Hint("confirm"), finish])
        if state["pipeline_state"] not in (t.pipeline["initial"], t.pipeline["running"]):
            raise IllegalTransition(f"the pipeline is {state['pipeline_state']}; answer the checkpoint with "
                                    "`{hint}` first", hint=Hint("confirm"))
        from statedir.engine.rules import stage_graph

        warning = stage_graph.start(t, draft, stage_id, now)["warning"]
    elif target == t.status["done"]:
        _complete(t, draft, stage_id, req, now)
    elif target == t.status.get("skipped"):
        if not t.skippable(stage_id):
            raise IllegalTransition(f"stage {t.display(stage_id)} can never be skipped", stage=stage_id)
        if stage_id == state["current_stage"]:
            raise IllegalTransition(f"stage {t.display(stage_id)} is the current stage; it cannot be skipped")
        raise IllegalTransition(f"stage {t.display(stage_id)} is not the current stage ({t.display(state['current_stage'])}); "
                                "a stage ahead is skipped only by the stage graph, through the decision that "
                                "passes it (see `{hint}`)", stage=stage_id, hint=Hint("next"))
        record["reason"] = req.reason or record.get("reason")
    elif target == t.status.get("blocked"):
        record["reason"] = req.reason or record.get("reason")
    record["status"] = target
    change = draft.change(f"stage {t.display(stage_id)} {target}", now)
    if warning:
        change.result["warning"] = warning
    return change


def _stage_details(t: Template, record: dict[str, Any], args: dict[str, Any], reason: str | None,
                   state: dict[str, Any]) -> set[str]:
    """Apply --mode/--output/--decision/--turns; returns the fields that changed."""
    before = dict(record)
    spec = t.stage(record["id"])
    if args.get("mode") is not None:
        record["mode"] = args["mode"]
    if args.get("outputs"):
        record["outputs"] = [*record["outputs"], *stage_outputs.new(t, record["outputs"], args["outputs"])]
    if args.get("decision") is not None:
        values = spec.get("decision", {}).get("values")
        if not values:
            raise InvalidValue(f"stage {t.display(record['id'])} takes no decision", stage=record["id"])
        if args["decision"] not in values:
            raise InvalidValue(f"decision {args['decision']!r} is not one of {', '.join(values)}")
        if t.doc.get("re_review_contract"):
            from statedir.engine.rules import review_contract

            review_contract.require_check(t, state, record, args["decision"])
        record["decision"] = args["decision"]
    _set_turns(t, record, args.get("turns"))
    return {k for k in record if record[k] != before.get(k)}


def _complete(t: Template, draft: RunDraft, stage_id: str, req: Request, now: str) -> None:
    state, record, spec = draft.state, draft.stage(stage_id), t.stage(stage_id)
    if "terminal_ack" in spec:
        words = spec["terminal_ack"]["responses"]
        raise IllegalTransition(f"stage {t.display(stage_id)} ends with the terminal acknowledgement: `{HINT}` "
                                f"(or {', '.join(words[1:])})", responses=words,
                                hint=Hint("confirm", {"run_id": Placeholder("RUN"), "response": words[0]}))
    if state["pipeline_state"] != t.pipeline["running"]:
        raise IllegalTransition(f"the pipeline is {state['pipeline_state']}, not running")
    integrity = spec.get("integrity") if not t.doc.get("fail_loop") else None  # older templates: a free-text
    if integrity and req.reason and record.get("retry_count", 0) >= integrity["retry_cap"]:  # decision here
        record["fail_loop_decision"] = req.reason
    if integrity and record.get("fail_loop_decision") and integrity.get("verifies"):
        # The user's recorded decision carries the draft on, "partially unverified": its passport
        # keeps its status, but the next stage may start.
        state["materials"][integrity["verifies"]] = True
    if not template_conditions.all_hold(spec.get("completion", []), record, state):
        needs = template_prose.worded(spec.get("completion_message")
                                      or template_conditions.describe(spec["completion"]))
        raise IllegalTransition(f"stage {t.display(stage_id)} cannot complete: {needs}", stage=stage_id,
                                needs=[needs.removeprefix("needs ")])
    if t.doc.get("failure_modes"):  # the run's own template: no setting, flag or actor silences a block
        from statedir.engine import failure_modes

        block = failure_modes.completion_refusal(t, state, stage_id, record)
        if block is not None:
            raise block
    if t.doc.get("compliance"):  # a blocking compliance report: only the user's acknowledgement lifts it
        from statedir.engine.rules import compliance

        refusal = compliance.completion_refusal(t, draft.run, stage_id)
        if refusal is not None:
            raise refusal
    kind, awareness = template_conditions.checkpoint_type(t, state, stage_id)
    checked = schema_checks.check(t, draft, stage_id)  # true only where something was checked and held
    validated = True if checked is None else (checked["result"] == "PASS" and bool(checked["schemas_checked"]))
    record.update(completed_at=now, schema_validated=validated, checkpoint_type=kind, checkpoint_confirmed=False)
    choices = [e["to"] for e in t.edges_from(stage_id)
               if template_conditions.all_hold(e.get("when", []), record, state)]
    defaults = [e["to"] for e in t.edges_from(stage_id) if e.get("default") and e["to"] in choices]
    default = choices[0] if len(choices) == 1 else (defaults[0] if defaults else None)
    from statedir.engine import checkpoint_dashboard
    from statedir.engine.rules import inquiry

    trip = checkpoint_dashboard.count_round_trip(t, state, stage_id)
    state.update(pipeline_state=t.pipeline["awaiting"], checkpoints_opened=state.get("checkpoints_opened", 0) + 1,
                 checkpoint={"stage": stage_id, "type": kind, "opened_at": now, "awareness_prompt": awareness,
                             "choices": choices, "default": default, "terminal": False,
                             **({"round_trip": trip} if trip else {})})
    summary = inquiry.checkpoint_summary(t, state, stage_id)  # only at the stages its setting lists, once published
    if summary:
        state["checkpoint"]["inquiry_summary"] = summary
    draft.log("checkpoints", {"at": now, "event": "opened", "stage": stage_id, "type": kind,
                              "awareness_prompt": awareness, "response": None, "next": default})
    if run_settings.effect_on(t, state, "reset_boundaries", req.args):
        from statedir.engine.rules import reset_boundaries

        if reset_boundaries.is_boundary(t, stage_id, kind) if reset_boundaries.shape(t) else kind == "FULL":
            reset_boundaries.append_boundary(t, draft, stage_id, choices, default, now, req.args.get("session"))

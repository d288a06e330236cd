"""The user's questions, as data: what a MANDATORY checkpoint, a FAIL-loop resolution, a
failure mode's acknowledgement and a compliance block's acknowledgement ask of the user (the
message, the responses the answer takes, the stages `next` may name, the decisions taken besides),
read off a run's template and state; and whether a role may carry the user's answer. An entry
point that asks the user itself (the MCP server, through the client's elicitation form) words its
form and its refusals from these."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statedir.engine import attribution, checkpoint_decisions
from statedir.engine import failure_modes as fm
from statedir.engine.rules import compliance, gates, stage_graph
from statedir.engine.template import USER, Template
from statedir.engine.transition_data import Request, RunData
from statedir.errors import StatedirError
from statedir.views import dashboard


@dataclass(frozen=True)
class Asked:
    """What the user is asked about run `run_id`: the message, the responses the answer takes and
    the stages `next` may name (the template's default stage preset, `next_default`); the name of
    the argument the chosen response fills (a checkpoint's `response`, a resolution's `decision`),
    free-text fields the user may fill (a `reason`) and what the question is about; what each
    response puts in the call's argument where not the response itself (a compliance block's
    `acknowledge`: override true); and the decisions the answer takes besides (the template's
    `checkpoint_decisions`: each the argument it fills, its options and its question)."""

    run_id: str
    stage: str
    message: str
    responses: tuple[str, ...]
    choices: tuple[str, ...]
    next_default: str | None
    answers: str = "response"
    free: tuple[str, ...] = ()
    about: str = "checkpoint"
    values: tuple[tuple[str, Any], ...] = ()
    picks: tuple[tuple[str, tuple[str, ...], str], ...] = ()


def asked(command: str, t: Template, run: RunData, arguments: dict[str, Any]) -> Asked | None:
    """The user's question where command `command` (confirm, resolve, acknowledge, compliance)
    with `arguments` would answer one on `run` (None: it answers nothing of the user's)."""
    found = QUESTIONS.get(command)
    return found(t, run, arguments) if found is not None else None


def carried(command: str, t: Template, run: RunData, carrier: str, channel: str) -> None:
    """Refused (PERMISSION_DENIED) where role `carrier` may not carry the user's answer to
    `command`, come by `channel` (statedir.engine.attribution.CHANNELS): before the user is asked."""
    attribution.users_answer(t, run, Request(_CARRIED[command], carrier, {},
                                             who={"answered_by": USER, "channel": channel}))


def question_of(t: Template, run: RunData, arguments: dict[str, Any]) -> Asked | None:
    """The user's question where run `run` holds an open MANDATORY checkpoint (None otherwise).
    The agent's `arguments` never fill the user's form: its response is not the user's answer."""
    asked = stage_graph.users_question(t, run)
    if asked is None:
        return None
    responses, choices = tuple(asked["responses"]), tuple(asked["choices"])
    checkpoint = run.state["checkpoint"]
    kind = (f"held (its quality check says {checkpoint['held']}; the pipeline is paused)" if checkpoint.get("held")
            else "MANDATORY")
    lines = [f"Run {run.run_id}: stage {_name(t, asked['stage'])} is complete. Its checkpoint is {kind}: "
             "it is yours to answer, not the agent's.", dashboard.line(t, run)]
    decided = run.stages[asked["stage"]].get("decision") if t.stage(asked["stage"]).get("decision") else None
    if decided:  # what the user approves by going on (a review's editorial decision)
        target = asked["default"]
        lines.append(f"The decision you approve: {decided}" + (f" (the pipeline goes on to {_name(t, target)})"
                                                                if target else "") + ".")
    for sid in t.stage_ids:  # a stage the user's FAIL-loop resolution carried on: its items stay in view
        if run.stages[sid].get("partially_unverified"):
            items = run.stages[sid].get("unresolved_items") or []
            lines.append(f"Stage {_name(t, sid)} went on partially unverified, {len(items)} unresolved item(s)"
                         + "".join(f"\n  - {i.get('severity')}: {i.get('type')}: {i.get('description')}"
                                   for i in items))
    if checkpoint.get("awareness_prompt"):
        count = run.state.get("consecutive_continue_count", 0)
        lines.append(f"You've continued {count} times in a row. Want to review progress?")
    policy = t.checkpoints
    meaning = {**{r: "go on" for r in policy.get("continue_responses", [])},
               **{r: "go on, having reviewed the work (later checkpoints are FULL again)"
                  for r in policy.get("review_responses", [])}}
    lines.append("Response: " + "; ".join(f"{r}: {meaning[r]}" if r in meaning else r for r in responses) + ".")
    if choices:
        lines.append("Next: " + ", ".join(_name(t, c) for c in choices) + ".")
    decision = checkpoint_decisions.applying(t, asked["stage"], run.stages, run.state)  # the one it takes besides
    picks = ((str(decision["option"]), tuple(str(o) for o in decision["options"]), str(decision["question"])),) \
        if decision else ()
    for name, options, ask in picks:
        lines.append(f"{name.capitalize()}: {ask} One of {', '.join(options)}.")
    return Asked(run.run_id, t.display(asked["stage"]), "\n".join(lines), responses, choices, asked["default"],
                 picks=picks)


def resolution_of(t: Template, run: RunData, arguments: dict[str, Any]) -> Asked | None:
    """The user's question where a `resolve` call would record a FAIL-loop resolution (the stage's
    FAIL rounds used up); None where the rules refuse it anyway (they say why)."""
    stage_id = _stage(t, arguments)
    if stage_id is None:
        return None
    asked = gates.resolvable(t, run, stage_id)
    if asked is None:
        return None
    items, loop = asked["unresolved_items"], t.doc.get("fail_loop") or {}
    lines = [f"Run {run.run_id}: stage {_name(t, stage_id)} has failed {asked['retry_count']} integrity rounds, its "
             "cap. What happens now is yours to decide, not the agent's.", dashboard.line(t, run),
             f"Open issues of the last check ({len(items)}):",
             *(f"  - {i.get('severity')}: {i.get('type')}: {i.get('description')}" for i in items)]
    meaning = {**{d: "one more check of the fixed draft" for d in loop.get("retry", [])},
               **{d: "go on; the draft is marked partially unverified with these items"
                  for d in loop.get("proceed", [])}}
    lines.append("Decision: " + "; ".join(f"{d}: {meaning[d]}" if d in meaning else d
                                          for d in asked["decisions"]) + ".")
    lines.append(f"Reason: override round {asked['round']} of this stage; {_needed(asked['least_characters'])}")
    return Asked(run.run_id, t.display(stage_id), "\n".join(lines), tuple(asked["decisions"]), (), None,
                 answers="decision", free=("reason",), about="FAIL-loop resolution")


def acknowledgement_of(t: Template, run: RunData, arguments: dict[str, Any]) -> Asked | None:
    """The user's question where an `acknowledge` call would answer a blocking failure mode; None
    where the rules refuse it anyway (an unknown stage, a mode that does not block: they say why)."""
    stage_id = _stage(t, arguments)
    if stage_id is None:
        return None
    mode, spec = str(arguments.get("mode")), fm.declared(t)
    if spec is None or not fm.carries(t, stage_id) or mode not in fm.standing(run.stages[stage_id]):
        return None
    check = run.stages[stage_id]["failure_modes"]
    evidence = (check.get("evidence") or {}).get(mode)
    meaning = {fm.BACK: f"the flag stands: the run goes back to stage {spec.get('on_confirm')}",
               fm.CLEAR: "go on past it for this stage, with your reason",
               fm.KEEP: "it keeps blocking until a new checklist"}
    number, least = _ladder(t, run, stage_id)
    least = max(1, least)
    lines = [f"Run {run.run_id}: the failure-mode checklist of stage {_name(t, stage_id)} blocks on mode "
             f"{fm.named(spec, [mode])}: {check['outcomes'].get(mode)}. How the run goes on is yours to decide, "
             "not the agent's.", dashboard.line(t, run)]
    if evidence:
        lines.append(f"Evidence: {evidence}")
    lines.append("Answer: " + "; ".join(f"{a}: {meaning.get(e, e)}" for a, e in spec["answers"].items()) + ".")
    lines.append(f"Reason: override round {number} of this stage; {_needed(least)}")
    return Asked(run.run_id, t.display(stage_id), "\n".join(lines), tuple(spec["answers"]), (), None,
                 answers="answer", free=("reason",), about="failure-mode acknowledgement")


def compliance_override_of(t: Template, run: RunData, arguments: dict[str, Any]) -> Asked | None:
    """The user's question where a `compliance` call with `override` would acknowledge a blocking
    report; None for a report, or where the rules refuse it anyway (nothing blocks: they say why)."""
    if not arguments.get("override"):
        return None
    stage_id = _stage(t, arguments)
    if stage_id is None:
        return None
    block = compliance.standing_block(t, run, stage_id)
    if block is None:
        return None
    number, least = _ladder(t, run, stage_id)
    frameworks = ", ".join(f"{name}: {decision}" for name, decision in (block.get("frameworks") or {}).items())
    lines = [f"Run {run.run_id}: the compliance report of stage {_name(t, stage_id)} (round {block['round']}, "
             f"{block['report']['path']}) decides {block['decision']} ({frameworks}; overall "
             f"{block.get('overall_decision')}): the stage cannot complete until you acknowledge it. Whether it "
             "does is yours to decide, not the agent's.", dashboard.line(t, run),
             "Answer: acknowledge: the block stands acknowledged, with your reason, and the stage may complete "
             "(decline to leave it blocking).",
             f"Reason: override round {number} of this stage; {_needed(least)}"]
    return Asked(run.run_id, t.display(stage_id), "\n".join(lines), ("acknowledge",), (), None,
                 answers="override", free=("reason",), about="compliance acknowledgement",
                 values=(("acknowledge", True),))


def _stage(t: Template, arguments: dict[str, Any]) -> str | None:
    """The stage a call names, or None where it names none of the template's (the rules say why)."""
    try:
        return t.resolve_stage(str(arguments.get("stage")))
    except StatedirError:
        return None


def _ladder(t: Template, run: RunData, stage_id: str) -> tuple[int, int]:
    """The override ladder's round the next override at `stage_id` is, and the least characters its reason needs."""
    ladder = t.doc.get("override_ladder") or [0]
    number = gates.ladder_round(t, run.state, stage_id)
    return number, int(ladder[min(number, len(ladder)) - 1])


def _needed(least: int) -> str:
    return ("it may be left out." if least == 0 else "it is needed." if least <= 1 else
            f"it needs at least {least} characters.")


def _name(t: Template, stage_id: str) -> str:
    if stage_id in t.terminal_targets:
        return stage_id
    spec = t.stage(stage_id)
    return f"{t.display(stage_id)} {spec.get('label', spec['name'])}"


QUESTIONS: dict[str, Callable[[Template, RunData, dict[str, Any]], Asked | None]] = {
    "confirm": question_of, "resolve": resolution_of, "acknowledge": acknowledgement_of,
    "compliance": compliance_override_of}
_CARRIED = {"confirm": "confirm", "resolve": "resolve", "acknowledge": "acknowledge_mode",  # the engine's actions
            "compliance": "compliance_override"}

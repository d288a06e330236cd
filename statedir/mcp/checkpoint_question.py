"""A MANDATORY checkpoint is the user's to answer, never the agent's: the question the server puts
to the user (through the client's elicitation form) before `confirm` runs there, and their answer.
No MCP SDK here."""
# Lazy imports: engine.failure_modes, engine.rules.compliance, engine.rules.gates: the server's own dependencies load
#   when it serves or a tool is called, not when the command table is read.
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statedir.engine import checkpoint_decisions
from statedir.engine.rules import gates, stage_graph
from statedir.engine.template import Template
from statedir.engine.transition_data import RunData
from statedir.errors import InvalidValue, StatedirError, UserAnswerRequired, UserDeclined
from statedir.mcp.tools import EXPECT_HEAD
from statedir.views import dashboard


@dataclass(frozen=True)
class Question:
    """What the user is asked: the message, the responses the checkpoint takes and the stages
    `next` may name (the template's default stage preset, never anything the agent proposed: the
    form is the user's), HEAD when it was asked and the run's state then (its folder's tree): the
    answer is written only on the run as the user saw it."""

    run_id: str
    stage: str
    message: str
    responses: tuple[str, ...]
    choices: tuple[str, ...]
    next_default: str | None
    head: str | None
    state: str | None = None
    # What the form asks besides: the name of the argument the chosen response fills (a checkpoint's
    # `response`, a resolution's `decision`), free-text fields the user may fill (a `reason`), and
    # what the question is about in the messages.
    answers: str = "response"
    free: tuple[str, ...] = ()
    about: str = "checkpoint"
    # What each response puts in the call's `answers` argument, where not the response itself (a
    # compliance block's `acknowledge`: override true).
    values: tuple[tuple[str, Any], ...] = ()
    # The decisions the answer takes besides (the template's `checkpoint_decisions`: the Stage 5
    # entry's citation style, `format`): each the argument it fills, its options and its question.
    picks: tuple[tuple[str, tuple[str, ...], str], ...] = ()

    @property
    def title(self) -> str:
        """The form's title; naming the run's state, so an answer to the run as it was is never
        taken for the run as it is (a question asked again whenever the run changed)."""
        what = "Checkpoint" if self.about == "checkpoint" else self.about[:1].upper() + self.about[1:]
        return f"{what} of run {self.run_id}" + (f" (state {self.state[:12]})" if self.state else "")

    def unaskable(self) -> StatedirError:
        """The refusal for a client that cannot ask its user (no elicitation)."""
        what = (f"the checkpoint after stage {self.stage} of run {self.run_id} is MANDATORY" if self.about == "checkpoint"
                else f"the {self.about} at stage {self.stage} of run {self.run_id} is the user's decision")
        return UserAnswerRequired(
            f"{what}: only the user may answer "
            "it, and this client cannot ask them (it does not support elicitation). Ask the user: show them "
            f"`status {{run_id: {self.run_id}}}`, and have them answer it themselves (a client that can show them "
            f"the form, or statedir's command line), with {self.answers} {' or '.join(self.responses)}; do not "
            "answer it for them",
            run_id=self.run_id, stage=self.stage, responses=list(self.responses), choices=list(self.choices))

    def misfit(self, wrong: dict[str, Any]) -> StatedirError:
        """The refusal for an accepted form whose answer it does not take: `wrong` maps each field
        to the value given (None: left out); nothing changed."""
        allowed = {self.answers: list(self.responses), "next": list(self.choices),
                   **{name: list(options) for name, options, _ in self.picks}}
        said = "; ".join(f"{name} was left out" if given is None else f"{name} {given!r} is not one of the choices"
                         for name, given in wrong.items())
        choices = "; ".join(f"{name}: {', '.join(allowed.get(name, []))}" for name in wrong)
        return InvalidValue(f"the user's answer did not fit the checkpoint's form ({said}; the choices are "
                            f"{choices}); nothing changed. Ask the user again",
                            run_id=self.run_id, stage=self.stage,
                            fields={name: {"given": given, "allowed": allowed.get(name, [])}
                                    for name, given in wrong.items()})

    def declined(self, action: str) -> StatedirError:
        """The refusal for a question the user declined or cancelled: nothing changed."""
        said = {"decline": "declined", "cancel": "cancelled"}.get(action, action)
        what = (f"the MANDATORY checkpoint after stage {self.stage}" if self.about == "checkpoint"
                else f"the {self.about} at stage {self.stage}")
        return UserDeclined(f"the user {said} {what} of run "
                            f"{self.run_id}; nothing changed. Do not answer it for them: ask what they want",
                            run_id=self.run_id, stage=self.stage, action=action)


@dataclass(frozen=True)
class Answer:
    """The user's answer to `question`: a response, and the next stage where the graph offers a choice."""

    question: Question
    response: str
    next: str | None = None
    free: tuple[tuple[str, str | None], ...] = ()  # the free-text fields as the user filled them
    picked: tuple[tuple[str, str | None], ...] = ()  # the question's picks as the user chose them

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments with the user's answer in place of the agent's (its free text and
        picks too: a reason or a citation style the agent wrote is not the user's), expecting the
        run as it was when the user was asked (a change since is HEAD_MOVED: the answer was to it)."""
        mine = {*self.question.free, *(name for name, _, _ in self.question.picks)}
        out = {**{k: v for k, v in arguments.items() if k not in mine}, **dict(self.picked),
               self.question.answers: dict(self.question.values).get(self.response, self.response),
               **dict(self.free), EXPECT_HEAD: self.question.head}
        if self.question.answers == "response":
            out["next"] = self.next or self.question.next_default
        return {key: value for key, value in out.items() if value is not None}


def question_of(t: Template, run: RunData, arguments: dict[str, Any], head: str | None,
                state: str | None = None) -> Question | None:
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
    return Question(run.run_id, t.display(asked["stage"]), "\n".join(lines), responses, choices,
                    asked["default"], head, state, picks=picks)


def resolution_of(t: Template, run: RunData, arguments: dict[str, Any], head: str | None,
                  state: str | None = None) -> Question | None:
    """The user's question where a `resolve` call would record a FAIL-loop resolution (the stage's
    FAIL rounds used up); None where the rules refuse it anyway (they say why)."""
    from statedir.engine.rules import gates

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
               **{d: "go on; the draft is marked partially unverified with these items" for d in loop.get("proceed", [])}}
    lines.append("Decision: " + "; ".join(f"{d}: {meaning[d]}" if d in meaning else d for d in asked["decisions"]) + ".")
    lines.append(f"Reason: override round {asked['round']} of this stage; {_needed(asked['least_characters'])}")
    return Question(run.run_id, t.display(stage_id), "\n".join(lines), tuple(asked["decisions"]), (), None, head,
                    state, answers="decision", free=("reason",), about="FAIL-loop resolution")


def acknowledgement_of(t: Template, run: RunData, arguments: dict[str, Any], head: str | None,
                       state: str | None = None) -> Question | None:
    """The user's question where an `acknowledge` call would answer a blocking failure mode; None
    where the rules refuse it anyway (an unknown stage, a mode that does not block: they say why)."""
    from statedir.engine import failure_modes as fm

    stage_id = _stage(t, arguments)
    if stage_id is None:
        return None
    mode, spec = str(arguments.get("mode")), fm.declared(t)
    if spec is None or not fm.carries(t, stage_id) or mode not in fm.standing(run.stages[stage_id]):
        return None
    check = run.stages[stage_id]["failure_modes"]
    evidence = (check.get("evidence") or {}).get(mode)
    meaning = {fm.BACK: f"the flag stands: the run goes back to stage {spec.get('on_confirm')}",
               fm.CLEAR: "go on past it for this stage, with your reason", fm.KEEP: "it keeps blocking until a new checklist"}
    number, least = _ladder(t, run, stage_id)
    least = max(1, least)
    lines = [f"Run {run.run_id}: the failure-mode checklist of stage {_name(t, stage_id)} blocks on mode "
             f"{fm.named(spec, [mode])}: {check['outcomes'].get(mode)}. How the run goes on is yours to decide, "
             "not the agent's.", dashboard.line(t, run)]
    if evidence:
        lines.append(f"Evidence: {evidence}")
    lines.append("Answer: " + "; ".join(f"{a}: {meaning.get(e, e)}" for a, e in spec["answers"].items()) + ".")
    lines.append(f"Reason: an override is override round {number} of this stage; it needs "
                 + ("one." if least <= 1 else f"at least {least} characters."))
    return Question(run.run_id, t.display(stage_id), "\n".join(lines), tuple(spec["answers"]), (), None, head, state,
                    answers="answer", free=("reason",), about="failure-mode acknowledgement")


def compliance_override_of(t: Template, run: RunData, arguments: dict[str, Any], head: str | None,
                           state: str | None = None) -> Question | None:
    """The user's question where a `compliance` call with `override` would acknowledge a blocking
    report; None for a report, or where the rules refuse it anyway (nothing blocks: they say why)."""
    from statedir.engine.rules import compliance

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
             f"Reason: an acknowledgement is override round {number} of this stage; {_needed(least)}"]
    return Question(run.run_id, t.display(stage_id), "\n".join(lines), ("acknowledge",), (), None, head, state,
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

"""The legal moves from a run's state (`statedir next`), found by asking the rules.

Every request a caller could make now (each command, with each value its enumerated arguments
take) is decided by `rules.decision.decide` on the run's own data: the accepted ones are the moves; the
refused ones whose refusal says what they need (`needs` in its details) are what blocks the
rest. No rule is written here: a candidate is only a question put to the rules.
"""
from __future__ import annotations

from typing import Any

from statedir.engine import admission, checkpoint_decisions, next_gates, stage_outputs
from statedir.engine.move_candidates import REASON, Candidate, actor_for, at_hand
from statedir.engine.next_grouping import Found, grouped, grouped_blocked, identity, without_leads
from statedir.engine.rules import stage_graph, submissions
from statedir.engine.rules.decision import decide
from statedir.engine.rules.stage import move_listed
from statedir.engine.run_document import awaiting_resume
from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.transition_data import Change, RunData, require_live
from statedir.errors import RunTerminal, StatedirError


def _stage_candidates(t: Template, run: RunData, stage_ids: list[str], *, flow: bool,
                      pruned: bool = True) -> list[Candidate]:
    out = []
    done, active = t.status["done"], t.status["active"]
    for stage_id in stage_ids:
        actor = actor_for(t, "stage", stage_id)
        if actor is None:
            continue
        record = run.stages[stage_id]
        statuses = sorted(t.moves.get(record["status"], []) if flow else t.statuses,
                          key=lambda s: (s != done, s != active))
        decisions = t.stage(stage_id).get("decision", {}).get("values", [])
        for status in statuses:
            for decision in [None, *decisions] if status == done else [None]:
                if pruned and decision is None and not _may_ask(t, record["status"], status):
                    continue
                args: dict[str, Any] = {"stage": stage_id, "status": status, "mode": None, "outputs": [],
                                        "decision": decision, "turns": None}
                shown = {"stage": stage_id, "status": status, "decision": decision}
                out.append(Candidate("stage", actor, args, shown, ("stage", "decision")))
    return out


def _confirm_candidates(t: Template, run: RunData, pruned: bool) -> list[Candidate]:
    """Each answer to the open checkpoint (or the terminal acknowledgement); `pruned`: those the
    rules read past their first refusals only (stage_graph.answerable)."""
    if not pruned:
        return _answers(t, run)
    taken = [r for r in [None, *t.checkpoints.get("responses", [])] if stage_graph.answerable(t, run, r)]
    return [c for c in _answers(t, run) if c.args["response"] in taken] if taken else []


def _answers(t: Template, run: RunData) -> list[Candidate]:
    actor = actor_for(t, "confirm")
    if actor is None:
        return []
    checkpoint = run.state.get("checkpoint")
    targets = [e["to"] for e in t.edges_from(checkpoint["stage"])] if checkpoint else []
    dash = t.checkpoints.get("dashboard") or {}
    optional = ("metric", "quality") if checkpoint and not checkpoint.get("held") and \
        checkpoint["type"] in dash.get("types", []) else ()  # the decision dashboard it records
    asked = checkpoint_decisions.declared(t).get(checkpoint["stage"]) if checkpoint else None
    if asked and asked.get("decides"):
        asked = checkpoint_decisions.applying(t, checkpoint["stage"], run.stages, run.state)  # type: ignore[index]
        if asked:  # the user's pick, the next stage following from it: each pick a request
            option = asked["option"]
            return [Candidate("confirm", actor, {"next": None, "response": response, option: str(value)},
                              {"response": response, option: str(value)}, ("response", option))
                    for value in asked["options"] for response in [None, *t.checkpoints.get("responses", [])]]
    required = bool(asked and asked.get("required"))  # an answer starting a stage gives it: each value a request
    optional += (asked["option"],) if asked and not required else ()  # the decision it takes as its answer
    given = [{asked["option"]: str(value)} for value in asked["options"]] if asked and required else []

    def picks(target: str | None) -> list[dict[str, str]]:  # an answer ending the run needs no decision
        return given if given and target not in t.terminal_targets else [{}]
    return [Candidate("confirm", actor, {"next": target, "response": response, **pick},
                      {"next": target, "response": response, **pick}, ("next", "response", *pick), optional=optional)
            for target in [None, *dict.fromkeys(targets)]
            for response in [None, *t.checkpoints.get("responses", [])] for pick in picks(target)]


def _integrity_candidates(t: Template, stage_ids: list[str], samples: list[tuple[int | None, int | None]]
                          ) -> list[Candidate]:
    out = []
    for stage_id in stage_ids:
        actor = actor_for(t, "integrity", stage_id)
        if actor is None or "integrity" not in t.stage(stage_id):
            continue
        for verdict in submissions.VERDICTS:
            for found, fixed in samples:
                args = {"stage": stage_id, "verdict": verdict, "refs_total": 1, "refs_verified": 1,
                        "issues_found": found, "issues_fixed": fixed, "issues": []}
                out.append(Candidate("integrity", actor, args, {"stage": stage_id, "verdict": verdict}, ("verdict",)))
    return out


def _contract_candidates(t: Template, run: RunData) -> list[Candidate]:
    """The re-review contract's next part, or its check (with the recorded files unchanged)."""
    spec = t.doc.get("re_review_contract")
    if not spec:
        return []
    stage_id = spec["stage"]
    recorded = run.stages[stage_id].get("contract") or {}
    file = {"path": "-", "content_hash": "0" * 64}
    out = []
    for part in spec["parts"]:
        out += _one(t, "contract", {"stage": stage_id, "part": part, "file": file},
                    {"stage": stage_id, "part": part}, ("part",), stage_id)
    current = {part: entry["sha256"] for part, entry in recorded.items()}
    for code in spec["check_codes"]:
        out += _one(t, "contract", {"stage": stage_id, "part": "check", "file": file, "exit_code": int(code),
                                    "current": current}, {"stage": stage_id, "part": "check", "exit_code": int(code)},
                    ("part", "exit_code"), stage_id)
    return out


def _one(t: Template, command: str, args: dict[str, Any], shown: dict[str, Any], vary: tuple[str, ...] = (),
         stage_id: str | None = None, reason: str | None = None) -> list[Candidate]:
    actor = actor_for(t, command, stage_id)
    return [] if actor is None else [Candidate(command, actor, args, shown, vary, reason)]


def flow_candidates(t: Template, run: RunData, integrity_samples: list[tuple[int | None, int | None]],
                    counters: bool, *, pruned: bool = True) -> list[Candidate]:
    """The moves that carry a run along its flow: the current stage's status moves, its
    submissions, answering the checkpoint (and, with `counters`, the loop counter); `pruned`: as
    `candidates`."""
    current = run.state.get("current_stage")
    here = [current] if current else []
    out = _stage_candidates(t, run, here, flow=True) + _confirm_candidates(t, run, pruned)
    out += _integrity_candidates(t, here, integrity_samples) + next_gates.candidates(t, run, here, flow=True)
    out += _contract_candidates(t, run)
    out += _one(t, "revision", {"items_total": 1, "items_addressed": 1, "pending": []}, {})
    if counters:
        out += _one(t, "loop", {}, {})
    return at_hand(t, run, out) if pruned else out


def _may_ask(t: Template, current: str, status: str) -> bool:
    """Whether a bare status move (no decision, mode, output or turns) is worth asking: the rules
    refuse one the template's moves do not list, needing nothing, before they look further."""
    return status == current or move_listed(t, current, status)


def _live(t: Template, run: RunData) -> bool:
    """A run the rules still take requests for: of a finished one they refuse every move `next`
    asks about (none is a binding that follows the end), needing nothing, so none is tried."""
    try:
        require_live(t, run.state)
    except RunTerminal:
        return False
    return True


def candidates(t: Template, run: RunData, *, pruned: bool = True) -> list[Candidate]:
    """Every request worth asking the rules about in this run's state, flow moves first.
    `pruned` (the default) leaves out what the rules' own data already refuses without a need
    (a finished run's every move; a stage's status move its template does not list; a
    submission for a stage not at work, move_candidates.at_hand): the same
    answer from fewer trials; `pruned=False` is every request, for the tests to compare."""
    if pruned and not _live(t, run):
        return []
    state = run.state
    current = state.get("current_stage")
    ordered = sorted(t.stage_ids, key=lambda s: s != current)
    out = _stage_candidates(t, run, ordered, flow=False, pruned=pruned) + _confirm_candidates(t, run, pruned)
    out += _integrity_candidates(t, ordered, [(None, None)]) + next_gates.candidates(t, run, ordered[:1])
    out += _contract_candidates(t, run) + next_gates.entry_candidates(t, run)
    out += _one(t, "revision", {"items_total": 1, "items_addressed": 1, "pending": []}, {})
    out += _one(t, "loop", {}, {})
    out += _one(t, "inquiry", {"branch": "b", "note": "n"}, {})  # a run keeping an inquiry ledger
    for stage_id in t.stage_ids:
        named = stage_outputs.accepted(t, stage_id)  # one it does not hold yet, where it holds each once
        named = stage_outputs.new(t, run.stages[stage_id].get("outputs") or [], named)[:1] or named[:1]
        out += _one(t, "output", {"stage": stage_id, "outputs": named or ["-"]},
                    {"stage": stage_id}, ("stage",), stage_id)
        out += _one(t, "redo", {"stage": stage_id}, {"stage": stage_id}, ("stage",), stage_id, reason=REASON)
    for name in t.materials:
        out += _one(t, "material", {"names": [name], "files": [], "origin_skill": None, "origin_mode": None,
                                    "upstream": []}, {"names": name}, ("names",))
    for stage_id in [*t.stage_ids, "pipeline"]:
        for kind in submissions.OBSERVER_CHECKPOINTS:
            out += _one(t, "observe", {"stage": stage_id, "checkpoint": kind, "report": {"advisory_only": True}},
                        {"stage": stage_id, "checkpoint": kind}, ("stage", "checkpoint"))
    for hash_ in awaiting_resume(run.boundary_log or []):
        out += _one(t, "resume", {"hash": hash_, "stage": None, "mode": None, "choice": None}, {"hash": hash_},
                    ("hash",))
    for target in dict.fromkeys(t.pipeline.values()):
        out += _one(t, "pipeline", {"state": target}, {"state": target}, ("state",))
    for name, value in _settable(t, state) + _stage_fields(t, run):
        out += _one(t, "set", {"field": name, "value": value}, {"field": name}, ("field",), reason=REASON)
    return at_hand(t, run, out) if pruned else out


def _settable(t: Template, state: dict[str, Any]) -> list[tuple[str, str]]:
    """Each run-level field with a value it does not hold (`set` refuses a value already held); run
    settings a template declares are fixed at creation, never offered."""
    fields = [("topic", f"{state.get('topic')} (new)"), ("language", "x" if state.get("language") != "x" else "y")]
    if not t.doc.get("run_settings"):
        fields.append(("settings.reset_boundaries",
                       str(not state.get("settings", {}).get("reset_boundaries")).lower()))
    return fields + [(f"team.{role}", "x" if value != "x" else "y") for role, value in state.get("team", {}).items()]


def _stage_fields(t: Template, run: RunData) -> list[tuple[str, str]]:
    """The current stage's fields `set` may change (the template's `settable_stage_fields`: who works
    on it, the team's notes), each with a value it does not hold; any stage takes them alike."""
    current = run.state.get("current_stage")
    stage = run.stages.get(current) if current else None
    if stage is None:
        return []
    return [(f"stages.{current}.{name}", "x" if stage.get(name) != "x" else "y")
            for name in t.doc.get("settable_stage_fields") or []]


def trial(t: Template, run: RunData, candidate: Candidate, now: str) -> tuple[Change | None, StatedirError | None]:
    """The answer a new request gets (admission, then the rules): the change, or the refusal."""
    try:
        admission.admit(t, run, candidate.request())
        return decide(t, run, candidate.request(), now), None
    except StatedirError as exc:
        return None, exc


def liftable(refusal: StatedirError) -> bool:
    """A refusal a recorded decision (--reason) may lift: a cap, or a need the rules name."""
    return refusal.code == "LIMIT_REACHED" or "needs" in refusal.details or refusal.details.get("argument") == "reason"


def decided(t: Template, run: RunData, candidate: Candidate, now: str
            ) -> tuple[Candidate, Change | None, StatedirError | None]:
    """`trial`, and where a refusal names a need a recorded decision may meet, the same request
    with --reason: the candidate actually answered, with the answer."""
    change, refusal = trial(t, run, candidate, now)
    if refusal is not None and candidate.reason is None and liftable(refusal):
        with_reason = candidate.with_reason(REASON)
        change2, refusal2 = trial(t, run, with_reason, now)
        if refusal2 is None:
            return with_reason, change2, None
    return candidate, change, refusal


def moves(t: Template, run: RunData, now: str, *, pruned: bool = True) -> dict[str, Any]:
    """`{"run_id", "moves": [...], "blocked": [...]}`: what the rules accept now, and what the
    refused moves that name a need are waiting for (`pruned`: as `candidates`)."""
    legal: list[Found] = []
    refused: list[Found] = []
    for candidate in candidates(t, run, pruned=pruned):
        asked, change, refusal = decided(t, run, candidate, now)
        if change is not None and not change.noop:
            missing = change.result.get("missing_recommended")  # what entering its stage warns of, said here too
            legal.append(Found(asked, leads_to=_leads_to(run, change),
                               extra={"missing_recommended": list(missing)} if missing else None))
        elif refusal is not None and refusal.details.get("needs"):
            extra = {"materials": refusal.details["materials"]} if refusal.details.get("materials") else {}
            refused.append(Found(asked, needs=tuple(refusal.details["needs"]), extra=extra))
    taken = {identity(f.candidate) for f in legal}
    refused = [f for f in refused if identity(f.candidate) not in taken]
    return {"run_id": run.run_id, "current_stage": run.state.get("current_stage"),
            "pipeline_state": run.state["pipeline_state"],
            "moves": _likely_first(t, run, [_noted(t, m) for m in grouped(legal)]),
            "blocked": [{"move": without_leads(move), "needs": list(needs), **extra}
                        for move, needs, extra in grouped_blocked(refused)], **next_gates.advisories_shown(t, run)}


def _likely_first(t: Template, run: RunData, moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The moves with the one that carries the run on first, marked `likely`: the first that leads
    to a stage no earlier than the current one and neither pauses nor aborts the pipeline (a
    redo goes back; the rest change nothing of where the run stands); where none does, the
    integrity check of the current stage (its verdict is what the stage waits for)."""
    order = {sid: i for i, sid in enumerate(t.stage_ids)}
    here = order.get(run.state.get("current_stage"), -1)
    halts = {t.pipeline.get("paused"), t.pipeline.get("aborted")}

    def on(i: int) -> list[dict[str, Any]]:
        return [{**moves[i], "likely": True}, *moves[:i], *moves[i + 1:]]

    for i, move in enumerate(moves):
        leads = move.get("leads_to")
        if leads and leads.get("pipeline_state") not in halts and order.get(leads.get("current_stage"), here) >= here:
            return on(i)
    current = run.state.get("current_stage")
    for i, move in enumerate(moves):  # none leads on yet: the check whose verdict the current stage waits for
        if move["command"] == "integrity" and current in {t.resolve_stage(s) for s in move["allowed"].get("stage", [])}:
            return on(i)
    return moves


def _noted(t: Template, move: dict[str, Any]) -> dict[str, Any]:
    """An integrity move with a `note` saying what lets its stage complete (the stage's completion
    conditions, as the template writes them): a verdict it lists may be legal and still not lead on."""
    if move["command"] != "integrity":
        return next_gates.noted(t, move)
    notes = []
    for stage_id in move["allowed"].get("stage", []):
        completion = t.stage(t.resolve_stage(stage_id)).get("completion")
        if completion:
            notes.append(f"stage {t.display(t.resolve_stage(stage_id))} completes only with "
                         f"{template_conditions.describe(completion)}")
    return {**move, "note": "; ".join(notes)} if notes else move


def _leads_to(run: RunData, change: Change) -> dict[str, Any] | None:
    after = change.state or run.state
    keys = ("current_stage", "pipeline_state")
    if all(after.get(k) == run.state.get(k) for k in keys):
        return None
    return {k: after.get(k) for k in keys}

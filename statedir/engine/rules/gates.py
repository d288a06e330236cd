"""The integrity gates' user answers, as the template declares them: the FAIL-loop resolution
after an integrity stage's retry cap (`resolve`) and the override ladder every answer that lets
a run past a block climbs. Pure, like rules.py; no stage, decision or mode is named here."""
from __future__ import annotations

import copy
from typing import Any

from statedir import hints
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunDraft, Request, RunData, active_current
from statedir.errors import IllegalTransition, InvalidValue, LimitReached, StatedirError


def users_answer(req: Request) -> dict[str, Any]:
    """Who answered, as the request records it: `answered_by` (the user), and `via` the role that
    relayed it where that is not the user (the one place a user's answer is said to be theirs)."""
    by = req.who.get("answered_by") or req.args.get("answered_by")
    if not by:
        return {}
    via = req.who.get("via") or (req.actor if req.actor != by else None)
    return {"answered_by": by, **({"via": via} if via else {})}


def ladder_round(t: Template, state: dict[str, Any], stage_id: str) -> int:
    """The round of the override ladder the next override at `stage_id` is (1 for the first)."""
    return int((state.get("override_rounds") or {}).get(stage_id, 0)) + 1


def check_reason(t: Template, state: dict[str, Any], stage_id: str, reason: str | None, what: str) -> int:
    """The ladder's round for an override at `stage_id`, refusing a reason shorter than it asks
    (INVALID_VALUE naming the round); the count itself is bumped by `climb`."""
    ladder = t.doc.get("override_ladder") or [0]
    number = ladder_round(t, state, stage_id)
    least = int(ladder[min(number, len(ladder)) - 1])
    given = len((reason or "").strip())
    if given < least:
        said = ("needs a reason ({opt:reason})" if least <= 1 else
                f"needs a reason of at least {least} characters ({{opt:reason}}; this one has {given})")
        raise InvalidValue(f"{what} at stage {t.display(stage_id)} is override round {number} of this run and "
                           f"stage: it {said}", argument="reason", round=number, least_characters=least,
                           given_characters=given)
    return number


def climb(state: dict[str, Any], stage_id: str) -> None:
    rounds = state.setdefault("override_rounds", {})
    rounds[stage_id] = int(rounds.get(stage_id, 0)) + 1


def retry_cap(spec: dict[str, Any], record: dict[str, Any]) -> int:
    """An integrity stage's FAIL rounds allowed: the template's cap, lifted by one round for each
    resolution that asked for another check."""
    return int(spec["retry_cap"]) + int(record.get("extra_rounds") or 0)


def resolve(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """The user's FAIL-loop resolution after the retry cap: a decision the template lists, never
    free text; it carries the last check's open issues as `unresolved_items`."""
    assert stage_id is not None
    spec, loop = _declared(t, stage_id)
    decision, decisions = req.args.get("decision"), list(loop["decisions"])
    if decision not in decisions:
        raise InvalidValue(f"unknown FAIL-loop decision {decision!r}; use one of {', '.join(decisions)}",
                           decision=decision, allowed=decisions)
    retries, cap = _at_cap(t, run, stage_id, spec, loop)
    number = check_reason(t, run.state, stage_id, req.reason, "a FAIL-loop resolution")
    draft = RunDraft(run)
    rec = draft.stage(stage_id)
    items = copy.deepcopy(rec.get("issues_detail") or [])
    rec["fail_loop_decision"] = decision
    proceeds = decision in loop.get("proceed", [])
    if decision in loop.get("retry", []):
        rec["extra_rounds"] = int(rec.get("extra_rounds") or 0) + 1
    if proceeds:
        rec.update(partially_unverified=True, unresolved_items=items)
        _carry_unverified(t, draft, spec, items)
    climb(draft.state, stage_id)
    draft.log("integrity", {
        "at": now, "stage": stage_id, "mode": rec.get("mode"), "verdict": rec.get("verdict") or "FAIL",
        "refs_total": rec.get("refs_total") or 0, "refs_verified": rec.get("refs_verified") or 0,
        "issues_found": rec.get("issues_found") or 0, "issues_fixed": rec.get("issues_fixed") or 0,
        "retry_count": retries, "issues_detail": items, "report": None, "decision": decision,
        "event": "resolution", "reason": req.reason, "unresolved_items": items, "override_round": number,
        **users_answer(req)})
    effect = ("the stage may complete, partially unverified" if proceeds else
              f"one more check allowed ({retries} of {cap + 1} FAIL rounds)")
    change = draft.change(f"resolve {t.display(stage_id)} {decision}: {effect}", now, decision=decision,
                          unresolved_items=items, override_round=number)
    if not items and rec.get("issues_found"):
        change.result["warning"] = hints.said("the last check counted open issues without describing them "
                                              "({opt:issue}); the resolution names none")
    return change


def _declared(t: Template, stage_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    spec, loop = t.stage(stage_id).get("integrity"), t.doc.get("fail_loop")
    if not spec or not loop:
        raise InvalidValue(f"stage {t.display(stage_id)} takes no FAIL-loop resolution"
                           + ("" if loop else f" (template {t.name} {t.doc.get('version')} declares none)"),
                           stage=stage_id)
    return spec, loop


def _at_cap(t: Template, run: RunData, stage_id: str, spec: dict[str, Any], loop: dict[str, Any]) -> tuple[int, int]:
    """The stage's FAIL rounds and cap, refusing a resolution anywhere but at the cap."""
    record = active_current(t, run, stage_id, "a FAIL-loop resolution")
    cap, retries = retry_cap(spec, record), int(record.get("retry_count") or 0)
    if record.get("fail_loop_decision") in loop.get("proceed", []):
        raise IllegalTransition(f"stage {t.display(stage_id)} is resolved already ({record['fail_loop_decision']}); "
                                "complete it", stage=stage_id, decision=record["fail_loop_decision"])
    if retries < cap:
        raise IllegalTransition(f"stage {t.display(stage_id)} has failed {retries} of its {cap} FAIL rounds; a "
                                "FAIL-loop resolution comes only after the cap is reached (record the next check "
                                "with `{hint}`)", stage=stage_id, retry_count=retries, retry_cap=cap,
                                hint=hints.Hint("integrity"))
    return retries, cap


def resolvable(t: Template, run: RunData, stage_id: str) -> dict[str, Any] | None:
    """What the user is asked where a FAIL-loop resolution at `stage_id` would be taken now: the
    decisions, the open issues, the ladder's round and the reason it needs (None: the rules refuse it)."""
    try:
        spec, loop = _declared(t, stage_id)
        retries, _ = _at_cap(t, run, stage_id, spec, loop)
    except StatedirError:
        return None
    ladder = t.doc.get("override_ladder") or [0]
    number = ladder_round(t, run.state, stage_id)
    return {"stage": stage_id, "decisions": list(loop["decisions"]), "retry_count": retries,
            "unresolved_items": list(run.stages[stage_id].get("issues_detail") or []), "round": number,
            "least_characters": int(ladder[min(number, len(ladder)) - 1])}


def _carry_unverified(t: Template, draft: RunDraft, spec: dict[str, Any], items: list[dict[str, Any]]) -> None:
    """continue_unverified: what the stage would verify is held (the run goes on), and the current
    draft's passport says it went on partially unverified, its status unchanged (never VERIFIED)."""
    state = draft.state
    if spec.get("verifies"):
        state["materials"][spec["verifies"]] = True
    label = state.get("current_version", {}).get(spec.get("verifies_draft_series") or "")
    if label and label in draft.run.passports:
        draft.passports[label] = {**copy.deepcopy(draft.run.passports[label]), "partially_unverified": True,
                                  "unresolved_items": copy.deepcopy(items)}


def unverified_note(record: dict[str, Any]) -> str | None:
    """What a dashboard row says of a stage carried on by the user's resolution (None: nothing)."""
    if not record.get("partially_unverified"):
        return None
    count = len(record.get("unresolved_items") or [])
    return f"partially unverified ({count} unresolved item{'s' if count != 1 else ''})"


def limit(t: Template, stage_id: str, record: dict[str, Any], spec: dict[str, Any]) -> LimitReached | None:
    """The refusal of one more integrity check at a stage whose FAIL rounds are used up (None: allowed)."""
    loop = t.doc.get("fail_loop") or {}
    cap, retries = retry_cap(spec, record), int(record.get("retry_count") or 0)
    if retries < cap:
        return None
    if record.get("fail_loop_decision") in loop.get("proceed", []):
        return LimitReached(f"stage {t.display(stage_id)} went on by the user's resolution "
                            f"{record['fail_loop_decision']}; complete it (no further check is taken)",
                            retry_count=retries, needs=[f"stage {t.display(stage_id)} completed"])
    return LimitReached(f"stage {t.display(stage_id)} has failed {retries} rounds (cap {cap}); the user decides "
                        f"with `{{hint}}` ({', '.join(loop.get('decisions', []))})", retry_count=retries,
                        needs=[hints.said("the user's FAIL-loop resolution ({hint})", hints.Hint("resolve"))],
                        hint=hints.Hint("resolve", {"run_id": hints.Placeholder("RUN"), "stage": stage_id,
                                                    "decision": hints.Placeholder("DECISION")}))

"""Decisions on what agents submit: outputs, materials, integrity and revision records,
observer reports and counters. Pure, like rules.py."""
from __future__ import annotations

import copy
from typing import Any

from statedir.engine import cross_model, materials, mid_entry, schema_checks, stage_outputs, traceability, wording
from statedir.engine.rules import gates
from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.transition_data import Change, Request, RunData, RunDraft, active_current
from statedir.errors import IllegalTransition, InvalidValue, LimitReached, PermissionDenied
from statedir.hints import Hint, said

VERDICT_ALIASES = {"PASS_WITH_CONDITIONS": "PASS_WITH_NOTES"}
VERDICTS = ("PASS", "PASS_WITH_NOTES", "FAIL")


def output(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """submit_output: a sub-skill appends its own stage's outputs."""
    assert stage_id is not None
    active_current(t, run, stage_id, "output")
    if not req.args.get("outputs"):
        raise InvalidValue("give at least one {opt:output}")
    draft = RunDraft(run)
    record = draft.stage(stage_id)
    added = stage_outputs.new(t, record["outputs"], req.args["outputs"])
    if not added:  # each name is recorded once (outputs_once): the request is already true
        return Change(f"stage {t.display(stage_id)} already records {'; '.join(dict.fromkeys(req.args['outputs']))}; "
                      "nothing changed", noop=True)
    record["outputs"] = [*record["outputs"], *added]
    return draft.change(f"stage {t.display(stage_id)} output: {'; '.join(added)}", now)


def material(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    """Register the next version of a material (a bundle of one series shares one version)."""
    draft = RunDraft(run)
    names = req.args["names"]
    if len(set(names)) != len(names):
        raise InvalidValue("a material is named twice")
    if t.doc.get("integrity_sole_source"):
        made = [n for n in names if n in integrity_made(t)]
        if made:  # what an integrity check stands for is never the caller's to say
            raise PermissionDenied(f"{', '.join(made)} come{'s' if len(made) == 1 else ''} only from an integrity "
                                   "check (`{hint}`, actor integrity_verification) or a mid-entry "
                                   "passport, never from `material`", materials=made, hint=Hint("integrity"))
    current = draft.state["current_stage"]
    skill = req.args.get("origin_skill") or (t.owner(current) if current else None) or req.actor
    files = schema_checks.passport_files(t, req.args.get("files", []))
    label, passport, stale = materials.register(
        t, draft.state, run.passports, names, now, origin_skill=skill, origin_mode=req.args.get("origin_mode"),
        files=files, upstream=req.args.get("upstream", []), request_id=req.request_id)
    draft.passports = {**stale, label: passport}
    if traceability.registers(t, names):  # the traceability file: bound to its adjudication row (3.23)
        traceability.bind(t, draft)
    change = draft.change(f"material {', '.join(names)} -> {label}", now, version_label=label, stale=sorted(stale))
    lacking = schema_checks.lacking(t, names, files)
    if lacking:
        change.result["warnings"] = [lacking]
    return change


def integrity_made(t: Template) -> set[str]:
    """The materials the template's integrity stages write: each one's report and what it verifies."""
    specs = [s["integrity"] for s in t.stages if "integrity" in s]
    return {name for spec in specs for name in (spec.get("report_material"), spec.get("verifies")) if name}


def bump_versions(t: Template, draft: RunDraft, series_names: list[str], now: str, actor: str,
                  request_id: str | None = None) -> list[str]:
    """redo: each output series gets a new version derived from its current one."""
    bumped = []
    for name in series_names:
        old_label = draft.state.get("current_version", {}).get(name)
        old = draft.run.passports.get(old_label or "")
        if not old_label or old is None:
            continue
        label, passport, stale = materials.register(
            t, draft.state, {**draft.run.passports, **draft.passports}, old["materials"], now,
            origin_skill=old.get("origin_skill"), origin_mode="redo", files=old.get("files", []),
            upstream=old.get("upstream_dependencies", []), derived_from=old_label, request_id=request_id)
        draft.passports.update({**stale, label: passport})
        bumped.append(label)
    return bumped


def integrity(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """update_integrity: verdict, refs and issues for an integrity stage; FAIL retries capped."""
    assert stage_id is not None
    spec = t.stage(stage_id).get("integrity")
    if not spec:
        raise InvalidValue(f"stage {t.display(stage_id)} is not an integrity stage", stage=stage_id)
    args = req.args
    verdict = VERDICT_ALIASES.get(args["verdict"], args["verdict"])
    if verdict not in VERDICTS:
        raise InvalidValue(f"verdict {args['verdict']!r} is not one of {', '.join(VERDICTS)}")
    total, verified = args["refs_total"], args["refs_verified"]
    found, fixed = args.get("issues_found"), args.get("issues_fixed")
    issues = args.get("issues", [])
    found = len(issues) if found is None else found
    fixed = 0 if fixed is None else fixed
    if min(total, verified, found, fixed) < 0 or verified > total or fixed > found:
        raise InvalidValue("counts must be >= 0 with refs_verified <= refs_total and issues_fixed <= issues_found")
    record = active_current(t, run, stage_id, "integrity")
    draft = RunDraft(run)
    retries = record.get("retry_count", 0)
    decision = record.get("fail_loop_decision")
    gated = bool(t.doc.get("fail_loop"))  # the user's resolution is `resolve`'s, a decision the template lists
    if gated:
        refusal = gates.limit(t, stage_id, record, spec)
        if refusal is not None:
            raise refusal
    elif retries >= spec["retry_cap"] and not decision:
        if not req.reason:
            raise LimitReached(f"stage {t.display(stage_id)} has failed {retries} rounds (cap {spec['retry_cap']});"
                               " record the user's decision with {opt:reason} (handle manually / remove "
                               "unverifiable / continue with 'partially unverified' warning)",
                               retry_count=retries, needs=[said("the user's decision after the FAIL rounds, recorded with "
                                                                "{opt:reason}")])
        decision = req.reason
    mode = spec.get("mode")
    draft_series = spec.get("verifies_draft_series")
    draft_label = draft.state.get("current_version", {}).get(draft_series or "")
    label, passport, stale = materials.register(
        t, draft.state, run.passports, [spec["report_material"]], now, origin_skill=req.actor,
        origin_mode=mode, files=[], upstream=[draft_label] if draft_label else [], request_id=req.request_id)
    draft.passports.update({**stale, label: passport})
    passed = verdict != "FAIL"
    rec = draft.stage(stage_id)
    rec.update(verdict=verdict, refs_total=total, refs_verified=verified, issues_found=found,
               issues_fixed=fixed, mode=rec.get("mode") or mode, fail_loop_decision=decision,
               outputs=[*rec["outputs"], f"{label} ({verdict}, {verified}/{total} refs verified, "
                                         f"{found} issues)"])
    if not passed:
        rec["retry_count"] = retries + 1
    if gated:
        rec["issues_detail"] = list(issues)
    if passed and spec.get("verifies"):
        draft.state["materials"][spec["verifies"]] = True
    if passed and draft_label and draft_label in run.passports:
        draft.passports[draft_label] = {**copy.deepcopy(run.passports[draft_label]),
                                        "verification_status": "VERIFIED", "integrity_pass_date": now}
        completion = t.stage(stage_id).get("completion", [])
        if mid_entry.declared(t) and template_conditions.all_hold(completion, rec, draft.state):
            draft.passports[draft_label]["integrity_mode"] = mode  # what it stands for at a mid-entry
    draft.log("integrity", {
        "at": now, "stage": stage_id, "mode": mode, "verdict": verdict, "refs_total": total,
        "refs_verified": verified, "issues_found": found, "issues_fixed": fixed, "retry_count": retries,
        "issues_detail": issues, "report": label, "decision": decision, **({"event": "check"} if gated else {})})
    change = draft.change(f"integrity {t.display(stage_id)} {verdict} ({verified}/{total} refs, {found} issues)",
                          now, version_label=label)
    completion = t.stage(stage_id).get("completion", [])
    if completion and not template_conditions.all_hold(completion, rec, draft.state):
        change.result["warning"] = (f"stage {t.display(stage_id)} cannot complete on this record: it completes "
                                    f"only with {template_conditions.describe(completion)}")
    return change


def revision(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    """Record the revision round of the current revision stage."""
    stage_id = run.state["current_stage"]
    spec = t.stage(stage_id).get("revision") if stage_id else None
    if not spec:
        raise IllegalTransition(f"the current stage ({t.display(stage_id) if stage_id else stage_id}) is not a revision stage")
    active_current(t, run, stage_id, "revision")
    total = req.args["items_total"]
    addressed = req.args.get("items_addressed") or 0
    if total < 0 or addressed < 0 or addressed > total:
        raise InvalidValue("need 0 <= {opt:items_addressed} <= {opt:items_total}")
    draft = RunDraft(run)
    rounds = [r.get("revision_round") or 0 for r in run.stages.values() if "revision_round" in r]
    number = draft.stage(stage_id).get("revision_round") or max(rounds, default=0) + 1
    after = spec["after"][0]
    draft.stage(stage_id).update(revision_round=number, items_total=total, items_addressed=addressed)
    draft.log("revisions", {"at": now, "round": number, "stage": f"{t.display(after)} -> {t.display(stage_id)}",
                            "from_decision": run.stages[after].get("decision"), "items_total": total,
                            "items_addressed": addressed, "items_pending": list(req.args.get("pending", []))})
    change = draft.change(f"revision round {number} at stage {t.display(stage_id)}: {addressed}/{total} items",
                          now, round=number)
    if req.args.get("items_addressed") is None and total:  # followed literally, a move's required args only
        change.result["warning"] = said(f"{{opt:items_addressed}} left out: round {number} records 0 of {total} "
                                        "items addressed; record the round again with {opt:items_addressed} to "
                                        "correct it")
    return change


def loop(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    draft = RunDraft(run)
    cap = t.caps.get("re_revise_rounds")
    count = draft.state.get("loop_count", 0)
    if cap is not None and count >= cap:
        raise LimitReached(f"loop_count is at its cap ({cap})", loop_count=count,
                           needs=[f"loop_count below its cap ({cap}); the cap is reached"])
    draft.state["loop_count"] = count + 1
    return draft.change(f"loop_count {count} -> {count + 1}", now, loop_count=count + 1)


OBSERVER_CHECKPOINTS = ("FULL", "SLIM", "pipeline_completion")
OBSERVER_FIELDS = ("timestamp", "dialogue_log_ref", "zone", "scores", "cross_model_divergence", "advisory_only",
                   "model_scores")


def check_report(report: Any, *, name_keys: bool) -> None:
    """INVALID_VALUE (bad input, exit 2) unless `report` is a mapping of OBSERVER_FIELDS only;
    its other keys are named where `name_keys` (not for a file from outside the repository,
    which may be any file the process can read: its keys are counted, never repeated)."""
    keys = ", ".join(OBSERVER_FIELDS)
    if not isinstance(report, dict):
        raise InvalidValue(f"an observer report is a mapping of {keys} (advisory_only: true required); "
                           f"this one is {_kind(report)}", allowed=list(OBSERVER_FIELDS))
    extra = sorted(str(key) for key in set(report) - set(OBSERVER_FIELDS) - {"stage_id", "checkpoint_type"})
    if extra:
        named = ", ".join(repr(key) for key in extra[:10]) + (", ..." if len(extra) > 10 else "")
        raise InvalidValue(f"an observer report may have only the keys {keys} (advisory_only: true required); "
                           "this one also has "
                           + (named if name_keys else f"{len(extra)} other key(s) (not repeated: the file is "
                                                       "outside the repository)"),
                           allowed=list(OBSERVER_FIELDS), **({"unknown": extra[:10]} if name_keys else {}))


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    return "empty" if value is None else f"a single {type(value).__name__} value"


def observe(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """append_observer_report: append-only, advisory only, never at MANDATORY checkpoints."""
    if not t.may(req.actor, "observe"):
        allowed = t.roles_that_may("observe")
        raise PermissionDenied(f"{req.actor} may not append observer reports; only the collaboration depth observer "
                               f"({wording.either(allowed)}) may", actor=req.actor, allowed=allowed)
    kind, report = req.args["checkpoint"], req.args["report"]
    if kind not in OBSERVER_CHECKPOINTS:
        raise InvalidValue("{opt:checkpoint} takes FULL, SLIM or pipeline_completion")
    if (stage_id is None) != (kind == "pipeline_completion"):
        raise InvalidValue("{opt:stage} pipeline goes with {opt:checkpoint} pipeline_completion, and only with it")
    check_report(report, name_keys=True)
    if report.get("advisory_only") is not True:
        raise PermissionDenied("an observer report must carry advisory_only: true (its keys: "
                               f"{', '.join(OBSERVER_FIELDS)})", allowed=list(OBSERVER_FIELDS))
    if stage_id is not None:
        declared = t.stage(stage_id).get("checkpoint")
        recorded = run.stages[stage_id].get("checkpoint_type")
        if "MANDATORY" in (declared, recorded) or kind != (recorded or kind):
            raise PermissionDenied(f"no observer report at stage {t.display(stage_id)}: its checkpoint is "
                                   f"{recorded or declared} (observer reports only at FULL/SLIM checkpoints)")
    draft = RunDraft(run)
    entry = {"stage_id": stage_id or "pipeline", "checkpoint_type": kind,
             "timestamp": str(report.get("timestamp") or now),
             "dialogue_log_ref": report.get("dialogue_log_ref") or (
                 run.stages[stage_id].get("dialogue_log_ref") if stage_id else None),
             "zone": report.get("zone"), "scores": report.get("scores") or {},
             "cross_model_divergence": report.get("cross_model_divergence"), "advisory_only": True}
    entry.update(cross_model.entry_fields(t, run.state, report))  # one score set per model, never averaged
    draft.log("collaboration_depth", entry)
    flagged = [f["dimension"] for f in (entry.get("cross_model_divergence") or {}).get("flagged", [])] \
        if "model_scores" in entry else []
    return draft.change(f"observer report for {entry['stage_id']} ({kind})"
                        + (f"; models diverge on {', '.join(flagged)}" if flagged else ""), now,
                        **({"flagged": flagged} if "model_scores" in entry else {}))

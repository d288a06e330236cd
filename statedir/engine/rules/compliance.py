"""Compliance reports a template declares (`compliance:`, academic-pipeline: PRISMA-trAIce + RAISE):
a report at an integrity stage, valid under the schema the template names, appended to the current
draft's passport (`compliance_history`). Its decision is the most severe of the contributors the
template lists, capped unless the run is in the mode the template names; a block keeps the stage
from completing until the user acknowledges it under the override ladder; from the template's
round on, an entry records its resolution path. The report is bound to the template's adjudication
row by statedir itself, and the user's acknowledgement of a block is appended to the template's
`override_receipt` log and bound beside it, as the group's action receipt. Pure; no framework, stage or decision is named here."""
from __future__ import annotations

import copy
from typing import Any

from statedir.engine import adjudication_contract as contract
from statedir.engine import receipts
from statedir.engine.rules import gates
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunDraft, Request, RunData, active_current, require_live
from statedir.errors import IllegalTransition, InvalidValue
from statedir.files import schema
from statedir.hints import HINT, Hint, Placeholder, said


def declared(t: Template) -> dict[str, Any] | None:
    return t.doc.get("compliance")


def _spec(t: Template, stage_id: str | None) -> dict[str, Any]:
    spec = declared(t)
    if not spec:
        raise InvalidValue(f"template {t.name} {t.doc.get('version')} declares no compliance reports")
    if stage_id not in spec["stages"]:
        raise InvalidValue(f"compliance reports are recorded at stage {' or '.join(map(t.display, spec['stages']))}, "
                           f"not {t.display(stage_id) if stage_id else stage_id}", stage=stage_id,
                           allowed=list(spec["stages"]))
    return spec


def history(t: Template, run: RunData) -> list[dict[str, Any]]:
    """The current draft's compliance history (empty: none, or no draft)."""
    spec = declared(t)
    label = (run.state.get("current_version") or {}).get(spec["draft_series"]) if spec else None
    return list((run.passports.get(label) or {}).get("compliance_history") or []) if label else []


def _field(report: dict[str, Any], path: list[str]) -> Any:
    node: Any = report
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def decide(t: Template, run: RunData, report: dict[str, Any]) -> tuple[str, str, bool]:
    """(the decision, the most severe contributor's, whether the cap lowered it)."""
    spec = declared(t) or {}
    order = list(spec["severities"])
    found = [v for v in (_field(report, p) for p in spec["contributors"]) if v in order]
    worst = max(found, key=order.index) if found else order[0]
    cap, unless = spec.get("cap") or {}, (spec.get("cap") or {}).get("unless") or {}
    in_mode = bool(unless) and (run.stages.get(unless.get("stage")) or {}).get("mode") == unless.get("mode")
    if cap and not in_mode and order.index(worst) > order.index(cap["at"]):
        return cap["at"], worst, True
    return worst, worst, False


def record(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """`compliance RUN STAGE --report F.json` (actor compliance_agent)."""
    spec = _spec(t, stage_id)
    assert stage_id is not None
    require_live(t, run.state)
    active_current(t, run, stage_id, "a compliance report")  # before the stage completes: a block must hold it
    report, file = req.args.get("report"), req.args.get("file") or {}
    name = str(spec["report_schema"]).removesuffix(".schema.json")
    problems = schema.validate(name, report, file.get("path", "<report>"), quote=False)
    if problems:
        raise InvalidValue(f"the compliance report fails {spec['report_schema']}: "
                           + "; ".join(f"{p.path}: {p.message}" for p in problems[:5]),
                           argument="report", problems=[f"{p.path}: {p.message}" for p in problems])
    assert isinstance(report, dict)
    label = (run.state.get("current_version") or {}).get(spec["draft_series"])
    if not label or label not in run.passports:
        raise IllegalTransition(f"a compliance report is appended to the current draft's passport; this run has no "
                                f"{spec['draft_series']} yet", stage=stage_id)
    decision, worst, capped = decide(t, run, report)
    earlier = [e for e in history(t, run) if e.get("stage") == stage_id]
    entry: dict[str, Any] = {
        "at": now, "stage": stage_id, "round": len(earlier) + 1, "mode": report["mode"], "tier": report["tier"],
        "frameworks": {fw: body["decision"] for fw, body in report["frameworks"].items()},
        "overall_decision": report["overall_decision"], "decision": decision,
        "report": {"path": file["path"], "sha256": file["content_hash"]}}
    if capped:
        entry["capped_from"] = worst
    if entry["round"] >= int(spec.get("resolution_after", 0) or 1 << 30):
        entry["resolution_path"] = (spec.get("resolution_paths") or {}).get(decision, decision)
    draft = RunDraft(run)
    passport = copy.deepcopy(run.passports[label])
    passport["compliance_history"] = [*(passport.get("compliance_history") or []), entry]
    draft.passports[label] = passport
    _bind(spec, draft, stage_id, entry["round"], file["path"])
    summary = f"compliance {t.display(stage_id)}: {decision}" + (f" (capped from {worst})" if capped else "")
    if decision == spec["block"]:
        summary += f"; stage {t.display(stage_id)} waits for the user's acknowledgement"
    return draft.change(summary, now, decision=decision, round=entry["round"],
                        **({"capped_from": worst} if capped else {}))


def _bind(spec: dict[str, Any], draft: RunDraft, stage_id: str, round_: int, path: str) -> None:
    """The report bound to the template's adjudication row, one group per report (best effort)."""

    rows, family = draft.state.get("pending_adjudication_activity_bindings"), spec.get("binds")
    if not family or not isinstance(rows, list):
        return
    for row in rows:
        if row.get("source_family") != family:
            continue
        mine = [a for a in row.get("artifacts") or [] if row.get("capture_state") == contract.CAPTURED]
        artifact = {"artifact_id": f"compliance_report_{stage_id}_r{round_}", "artifact_role": family,
                    "artifact_group_id": f"SOURCE-GROUP-compliance-{stage_id}-r{round_}",
                    "artifact_group_stage": None, "relative_path": path}
        bound = {**row, "capture_state": contract.CAPTURED, "reason_code": None, "artifacts": [*mine, artifact]}
        if not contract.row_problems(bound, contract.BY_NAME[family], sealed=False):
            row.update(bound)


def standing_block(t: Template, run: RunData, stage_id: str) -> dict[str, Any] | None:
    """The stage's latest compliance entry where it blocks and the user has not acknowledged it."""
    spec = declared(t)
    if not spec or stage_id not in spec["stages"]:
        return None
    mine = [e for e in history(t, run) if e.get("stage") == stage_id]
    last = mine[-1] if mine else None
    return last if last and last["decision"] == spec["block"] and not last.get("user_override") else None


def override(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """`compliance RUN STAGE --override [--reason R]`: the user's acknowledgement of a blocking report."""
    spec = _spec(t, stage_id)
    assert stage_id is not None
    require_live(t, run.state)
    block = standing_block(t, run, stage_id)
    if block is None:
        raise IllegalTransition(f"no compliance report blocks stage {t.display(stage_id)}; the user acknowledges "
                                "only a standing block", stage=stage_id)
    round_ = gates.check_reason(t, run.state, stage_id, req.reason, "an acknowledgement of a compliance block")
    draft = RunDraft(run)
    label = run.state["current_version"][spec["draft_series"]]
    passport = copy.deepcopy(run.passports[label])
    entries = passport["compliance_history"]
    index = max(i for i, e in enumerate(entries) if e.get("stage") == stage_id)
    entries[index] = {**entries[index], "user_override": {"at": now, "reason": req.reason, "override_round": round_,
                                                         **gates.users_answer(req)},
                      **({"resolution_path": (spec.get("resolution_paths") or {}).get(spec["block"], "user_override")}
                         if "resolution_path" in entries[index] else {})}
    draft.passports[label] = passport
    gates.climb(draft.state, stage_id)
    _receipt(t, spec, draft, req, now, entries[index])
    return draft.change(f"compliance {t.display(stage_id)}: block acknowledged by the user (override round {round_})",
                        now, decision="override", override_round=round_)


def _receipt(t: Template, spec: dict[str, Any], draft: RunDraft, req: Request, now: str, entry: dict[str, Any]) -> None:
    """The user's acknowledgement appended to the template's `override_receipt` log (one file per
    run, the run's first day) and bound as the blocking report's group's action receipt."""
    log, family = spec.get("override_receipt"), spec.get("binds")
    if not log or not family:
        return
    stage_id, round_ = entry["stage"], entry["round"]
    group, day = f"SOURCE-GROUP-compliance-{stage_id}-r{round_}", str(draft.state.get("created_at") or now)[:10]
    answer = entry["user_override"]
    draft.log(log, {
        "at": now, "log_day": day, "source_family": family,
        "artifact_role": log, "stage": stage_id,
        "receipt_stage": str(t.stage(stage_id).get("ars_stage") or stage_id), "report_round": round_,
        "artifact_group_id": group, "report": entry["report"], "decision": entry["decision"],
        "action": "user_override", "override_round": answer["override_round"], "reason": req.reason,
        **{key: answer[key] for key in ("answered_by", "via") if answer.get(key)},
        **({"channel": req.who["channel"]} if req.who.get("channel") else {})})
    rows = draft.state.get("pending_adjudication_activity_bindings")
    if family not in contract.BY_NAME or not isinstance(rows, list):
        return
    artifact = {"artifact_id": f"compliance_override_{stage_id}_r{round_}", "artifact_role": log,
                "artifact_group_id": group, "artifact_group_stage": None,
                "relative_path": receipts.log_path(draft.run.run_id, log, day, req.args.get("store_prefix"))}
    for row in rows:
        members = [i for i, a in enumerate(row.get("artifacts") or []) if a.get("artifact_group_id") == group]
        if row.get("source_family") != family or row.get("capture_state") != contract.CAPTURED or not members:
            continue
        artifacts = list(row["artifacts"])
        artifacts.insert(members[-1] + 1, artifact)  # beside its report: a group's artifacts are listed together
        bound = {**row, "artifacts": artifacts}
        if not contract.row_problems(bound, contract.BY_NAME[family], sealed=False):  # best effort, as the report's
            row.update(bound)


def completion_refusal(t: Template, run: RunData, stage_id: str) -> IllegalTransition | None:
    block = standing_block(t, run, stage_id)
    if block is None:
        return None
    need = (f"the user's acknowledgement of the blocking compliance report (round {block['round']}): "
            f"`{HINT}` (actor user)")
    override = Hint("compliance", {"run_id": Placeholder("RUN"), "stage": stage_id, "override": True,
                                   "reason": Placeholder("R")})
    return IllegalTransition(f"stage {t.display(stage_id)} cannot complete: it needs {need}", stage=stage_id,
                             hint=override, needs=[said(need, override)])

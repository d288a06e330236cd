"""A run in the upstream State Tracker's single-JSON shape (`show --format ars`): stages keyed by raw
id, histories inline, with those the template's features keep (the failure-mode audit, compliance
and entry advisories, the inquiry ledger). Pure."""
from __future__ import annotations

from typing import Any

from statedir.engine import failure_modes, run_settings
from statedir.engine.rules import compliance, entry_advisories, inquiry
from statedir.engine.template import Template
from statedir.engine.transition_data import RunData


def ars(t: Template, run: RunData, histories: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The State Tracker example's single-JSON shape: stages keyed by raw id, histories inline.
    Strict JSON as the ARS tools read it: integers, never floats (a float an observer report
    carries is written as its decimal text)."""
    state = run.state
    keep = ("run_id", "topic", "language")
    doc: dict[str, Any] = {k: state[k] for k in keep}
    doc.update(
        pipeline_version=state.get("template_version"), entry_point=state["entry_point"],
        current_stage=state["current_stage"], pipeline_state=state["pipeline_state"],
        consecutive_continue_count=state.get("consecutive_continue_count", 0),
        stages={sid: {k: v for k, v in rec.items() if k != "id"} for sid, rec in run.stages.items()},
        revision_history=histories.get("revisions", []),
        integrity_history=histories.get("integrity", []),
        schema_validation_log=histories.get("schema_validation", []),
        materials=state.get("materials", {}), current_version=state.get("current_version", {}),
        team=state.get("team", {}), loop_count=state.get("loop_count", 0),
        collaboration_depth_history=histories.get("collaboration_depth", []),
        # who made each transition: the role, and the person, the user's answer, the agent relaying it
        transition_history=histories.get("transitions", []),
    )
    resolutions = [e for e in doc["integrity_history"] if e.get("event") == "resolution"]
    if resolutions:  # the user's FAIL-loop decisions, each with the items it went on with
        doc["fail_loop_resolutions"] = [
            {k: e.get(k) for k in ("at", "stage", "decision", "reason", "unresolved_items", "override_round",
                                   "answered_by")} for e in resolutions]
    if t.doc.get("failure_modes"):  # per mode its final status, its history and the user's answers
        doc["failure_mode_audit"] = failure_modes.audit(t, histories.get("failure_modes", []))
    if run_settings.declared(t):  # the settings the run was made with, and the marks they put on it
        doc["settings"] = dict(state.get("settings") or {})
        marks = run_settings.marks(t, state)
        if marks:
            doc["marks"] = marks
    if t.doc.get("entry_advisories") or t.doc.get("compliance"):  # bound to the draft; STALE once it is not current
        doc["stage5_advisories"] = entry_advisories.shown(t, run)
        doc["compliance_history"] = compliance.history(t, run)
    branches = inquiry.published(t, state)
    if branches is not None:  # the branch ledger, published from its second branch on
        doc["inquiry_ledger"] = {"branches": branches, "entries": histories.get("inquiry_ledger", [])}
    for key in ("pending_adjudication_activity_bindings", "adjudication_activity_sources"):
        if key in state:
            doc[key] = state[key]
    return _strict(doc)  # type: ignore[no-any-return]


def _strict(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() else repr(value)
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value

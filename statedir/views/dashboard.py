"""The Progress Dashboard and its one-line form, in the State Tracker's format."""
from __future__ import annotations

import textwrap
from typing import Any

from statedir.engine.rules import compliance, entry_advisories
from statedir.engine.rules.gates import unverified_note
from statedir.engine.run_settings import marks as run_settings_marks
from statedir.engine.run_settings import shown as settings_on
from statedir.engine.template import Template
from statedir.engine.transition_data import RunData

WIDTH = 45  # characters between the box's corner marks


def _pretty(value: str) -> str:
    return value.replace("_", " ").title()


def _detail(t: Template, run: RunData, stage_id: str, rec: dict[str, Any]) -> str:
    status, spec = rec["status"], t.stage(stage_id)
    label = t.doc["statuses"].get("labels", {}).get(status, _pretty(status))
    if status == t.status.get("skipped"):
        return label + (f" ({rec['reason']})" if rec.get("reason") else "")
    if "integrity" in spec and rec.get("verdict"):
        refs = ""
        if rec.get("refs_total") is not None:
            refs = f" ({rec['refs_verified']}/{rec['refs_total']} refs verified)"
        retry = f", retry {rec['retry_count']}" if rec.get("retry_count") else ""
        note = unverified_note(rec)  # the user's resolution carried it on: never shown as a pass
        return (f"{rec['verdict']}{refs}{retry}" + (f", {note}" if note else "")
                + ("" if status == t.status["done"] else f" - {label}"))
    if "decision" in spec and rec.get("decision"):
        items = _items_after(t, run, stage_id)
        return _pretty(rec["decision"]) + (f" ({items} items)" if items else "")
    if "revision" in spec and rec.get("items_total") is not None:
        return f"{label} ({rec['items_addressed']}/{rec['items_total']} addressed)"
    return label


def _items_after(t: Template, run: RunData, review_id: str) -> int | None:
    for sid in t.stage_ids:
        after = t.stage(sid).get("revision", {}).get("after", [])
        if review_id in after and run.stages[sid].get("items_total"):
            return int(run.stages[sid]["items_total"])
    return None


def _boxed(text: str) -> str:
    return f"| {text}".ljust(WIDTH + 1) + "|"


def _wrapped(text: str) -> list[str]:
    if len(text) <= WIDTH - 2 and text.isprintable() and text == text.strip():
        return [_boxed(text)]  # what textwrap makes of it, without loading textwrap
    return [_boxed(part) for part in textwrap.wrap(text, WIDTH - 2, subsequent_indent="  ") or [""]]


def render(t: Template, run: RunData) -> str:
    """The dashboard as text."""
    state = run.state
    rule, double = "+" + "-" * WIDTH + "+", "+" + "=" * WIDTH + "+"
    lines = [double, f"|   {t.doc.get('dashboard_title', t.doc.get('title', t.name))}".ljust(WIDTH + 1) + "|",
             double, *([*_wrapped(f"Topic: {state['topic']}"), rule] if state.get("topic") else [])]  # no empty box
    marks = run_marks(t, run)
    if marks:
        lines += [*(line for mark in marks for line in _wrapped(mark)), rule]  # a mark never broken
    markers = t.doc["statuses"].get("markers", {})
    # The State Tracker's columns (4 and 18 wide) fit the academic pipeline; longer ids or names widen them.
    id_width = max(4, *(len(t.display(sid)) + 1 for sid in t.stage_ids))
    name_width = max(18, *(len(t.stage(sid).get("label", t.stage(sid)["name"])) + 2 for sid in t.stage_ids))
    for sid in t.stage_ids:
        rec = run.stages[sid]
        name = t.stage(sid).get("label", t.stage(sid)["name"])
        trips = (state.get("checkpoint_round_trips") or {}).get(sid, 0)
        lines.append(f"  Stage {t.display(sid).ljust(id_width)}{name.ljust(name_width)}"
                     f"{markers.get(rec['status'], '[?]')} {_detail(t, run, sid, rec)}".rstrip()
                     + (f" ({trips} round trips)" if trips > 1 else ""))
    integrity = integrity_rows(t, run)
    if integrity:
        lines += [rule, _boxed("Integrity:")]
        lines += [line for row in integrity for line in _wrapped(f"  {row['label']}: {row['text']}")]
    reviews = review_rows(t, run)
    if reviews:
        lines += [rule, _boxed("Review:")]
        lines += [_boxed(f"  {row['label']}: {row['text']}") for row in reviews]
    for title, rows in (("Compliance:", compliance_rows(t, run)), ("Stage 5 entry advisories:", advisory_rows(t, run))):
        if rows:
            lines += [rule, _boxed(title), *(line for row in rows for line in _wrapped(f"  {row}"))]
    lines.append(double)
    lines.append(f"  Pipeline: {state['pipeline_state']}  |  current stage: "
                 f"{t.display(state['current_stage']) if state.get('current_stage') else '-'}")
    checkpoint = state.get("checkpoint")
    if checkpoint:
        lines.append(f"  Checkpoint open: {checkpoint['type']} after stage {t.display(checkpoint['stage'])}"
                     + (f"; next: {checkpoint['default']}" if checkpoint.get("default") else
                        f"; choose: {', '.join(checkpoint['choices'])}" if checkpoint.get("choices") else "")
                     + (f"; round trip {checkpoint['round_trip']}" if checkpoint.get("round_trip") else ""))
        if checkpoint.get("inquiry_summary"):  # only at the stages the setting lists, once published
            lines.append(f"  Inquiry: {checkpoint['inquiry_summary']}")
        if checkpoint.get("held"):
            lines.append(f"  Held: quality {checkpoint['held']}; paused until the user answers")
        lines += _dashboard_lines(run.stages[checkpoint["stage"]].get("dashboard"))
        if checkpoint.get("awareness_prompt"):
            count = state.get("consecutive_continue_count", 0)
            lines.append(f"  You've continued {count} times in a row. Want to review progress?")
    return "\n".join(lines)


def _dashboard_lines(dash: dict[str, Any] | None) -> list[str]:
    """The decision dashboard recorded at the open checkpoint (its metrics and quality)."""
    if not dash:
        return []
    shown = [f"{_pretty(key)}: {value}" for key, value in dash["metrics"].items()]
    shown += [f"Quality: {dash['quality']}"] if dash.get("quality") else []
    return [f"  Dashboard: {'; '.join(shown)}"]


def audit_lines(audit: dict[str, Any] | None) -> list[str]:
    """The failure-mode audit as the Stage 6 summary shows it: each mode's final status, what the
    checklists found, and the reasons of its overrides (nothing where there is no audit)."""
    if not audit:
        return []
    lines = [f"  Failure-mode audit (final status at stage {audit['stage']}):"]
    for mid, mode in audit["modes"].items():
        found = ", ".join(f"{h['stage']} {h['outcome']}" for h in mode["history"]) or "never checked"
        lines.append(f"    {mid} {mode['name']}: {mode['final_status'] or 'not final'} ({found})")
        lines += [f"      override: {reason}" for reason in mode["override_reasons"]]
    return lines


def failed_schema_checks(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The schema_validation_log's FAIL entries still standing: the last entry of each transition
    where it is a FAIL."""
    last = {entry.get("transition"): entry for entry in entries}
    return [entry for entry in last.values() if entry.get("result") == "FAIL"]


def schema_lines(failed: list[dict[str, Any]]) -> list[str]:
    """The failed schema checks as the dashboard notifies them (the State Tracker's "format
    mismatch -> notify"), each with the fields it missed."""
    return [f"  Schema check FAIL at {e.get('transition')}: missing {', '.join(e.get('missing_fields') or []) or '-'}"
            for e in failed]


def run_marks(t: Template, run: RunData) -> list[str]:
    """What the run was made with that changes its rules: its settings that are on, and the marks
    they put on it (e.g. [LEGACY-NO-CONTRACT])."""
    on = settings_on(t, run.state)
    marks = [f"Settings: {', '.join(on)}"] if on else []
    return marks + run_settings_marks(t, run.state)


def advisory_rows(t: Template, run: RunData) -> list[str]:
    """Each Stage 5 entry advisory: what was recorded, for which draft, and whether that is still the
    current one (STALE once a new draft version exists)."""
    if not t.doc.get("entry_advisories"):
        return []
    return [f"{e['kind']}: {e.get('code') or 'recorded'} for {e['version_label']} [{e['binding']}]"
            + (f", refused classes: {', '.join(e['refused'])}" if e.get("refused") else "")
            for e in entry_advisories.shown(t, run)]


def compliance_rows(t: Template, run: RunData) -> list[str]:
    """The current draft's compliance reports: stage, round, decision (and what the cap lowered)."""
    if not t.doc.get("compliance"):
        return []
    return [f"{t.display(e['stage'])} round {e['round']}: {e['decision']}"
            + (f" (capped from {e['capped_from']})" if e.get("capped_from") else "")
            + (", acknowledged by the user" if e.get("user_override") else "")
            + (f", resolution path {e['resolution_path']}" if e.get("resolution_path") else "")
            for e in compliance.history(t, run)]


def integrity_rows(t: Template, run: RunData) -> list[dict[str, Any]]:
    """The dashboard's Integrity lines: each integrity stage's mode and verdict (issues found)."""
    rows = []
    for sid in (sid for sid in t.stage_ids if "integrity" in t.stage(sid)):
        rec, spec = run.stages[sid], t.stage(sid)["integrity"]
        issues = f" ({rec['issues_found']} issues)" if rec.get("issues_found") is not None else ""
        note = unverified_note(rec)  # carried on by the user's resolution: never shown as a pass
        rows.append({"stage": sid, "label": spec.get("label") or _pretty(spec.get("mode") or sid),
                     "verdict": rec.get("verdict"), "note": note,
                     "text": f"{rec.get('verdict') or '-'}{issues}" + (f", {note}" if note else "")})
    return rows


def review_rows(t: Template, run: RunData) -> list[dict[str, Any]]:
    """The dashboard's Review lines: each review round's decision and the items it requires."""
    rows = []
    for number, sid in enumerate((sid for sid in t.stage_ids if "decision" in t.stage(sid)), 1):
        decision, items = run.stages[sid].get("decision"), _items_after(t, run, sid)
        rows.append({"stage": sid, "label": f"Round {number}", "decision": decision,
                     "text": (_pretty(decision) if decision else "-") + (f" ({items} items required)" if items else "")})
    return rows


def _named(t: Template, stage_id: str) -> str:
    """A stage by its short name and its id (`RE-REV' (4')`): short names may read alike."""
    short, shown = t.stage(stage_id).get("short"), t.display(stage_id)
    return f"{short} ({shown})" if short and short != shown else shown


def line(t: Template, run: RunData) -> str:
    """The simplified one-line form appended to checkpoint notifications."""
    markers = t.doc["statuses"].get("markers", {})
    parts = [f"{markers.get(run.stages[sid]['status'], '[?]')}{t.stage(sid).get('short', sid)}"
             for sid in t.stage_ids]
    checkpoint = run.state.get("checkpoint") if run.state.get("pipeline_state") == t.pipeline["awaiting"] else None
    opened = f"  |  checkpoint open: {checkpoint['type']} after {_named(t, checkpoint['stage'])}" if checkpoint else ""
    return "Pipeline: " + " -> ".join(parts) + opened


def structure(t: Template, run: RunData) -> dict[str, Any]:
    """The dashboard as data, for programs: each stage's status, label and marker, the open
    checkpoint and the pipeline state (what `render` draws)."""
    state, markers = run.state, t.doc["statuses"].get("markers", {})
    stages = [{"id": sid, "display": t.display(sid), "name": t.stage(sid).get("label", t.stage(sid)["name"]),
               "status": run.stages[sid]["status"], "marker": markers.get(run.stages[sid]["status"], "[?]"),
               "label": _detail(t, run, sid, run.stages[sid]),
               "current": sid == state.get("current_stage"),
               **({"round_trips": state["checkpoint_round_trips"][sid]}
                  if sid in (state.get("checkpoint_round_trips") or {}) else {})} for sid in t.stage_ids]
    return {"template": t.name, "topic": state.get("topic"), "pipeline_state": state["pipeline_state"],
            "current_stage": state.get("current_stage"), "checkpoint": state.get("checkpoint"), "stages": stages,
            "integrity": integrity_rows(t, run), "reviews": review_rows(t, run),
            "settings": (run.state.get("settings") or {}) if t.doc.get("run_settings") else {},
            "marks": run_settings_marks(t, state), "advisories": advisory_rows(t, run),
            "compliance": compliance_rows(t, run)}

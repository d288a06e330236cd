"""Creating runs as plain data: a new run's state and stages, entering where it enters (reading a run
back as one document is statedir.engine.run_document's)."""
from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from statedir.engine import materials, mid_entry, run_settings
from statedir.engine.adjudication_rows import initial_rows
from statedir.engine.run_shape import new_stage  # noqa: F401 (a stage's record as it starts, named here too)
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunData
from statedir.errors import IllegalTransition, InvalidValue
from statedir.hints import opt


def new_run(t: Template, run_id: str, topic: str | None, language: str, entry_point: str | None, now: str,
            *, passport: dict[str, Any] | None = None, confirm_skip: bool = False,
            file: dict[str, str] | None = None, settings: dict[str, Any] | None = None,
            brought: list[dict[str, Any]] | None = None) -> tuple[RunData, Change]:
    """The files of a new run, entering at `entry_point` (mid-entry skips what lies before), with
    the run settings `settings` gives (statedir.engine.run_settings; fixed from now on); `brought`,
    the files the user brings that the entry stage registers (statedir.engine.mid_entry)."""
    recorded_settings = run_settings.initial(t, settings)
    if topic is None and "topic" in t.required_run_fields:
        raise InvalidValue(f"template {t.name} needs {opt('topic')} (what the run is about)", argument="topic")
    if topic is not None and not topic.strip():
        raise InvalidValue("{opt:topic} must not be empty")
    entry = t.resolve_stage(entry_point) if entry_point else t.entry_points()[0]
    if entry not in t.entry_points():
        raise IllegalTransition(f"stage {t.display(entry)} is not an entry point; choose one of "
                                f"{', '.join(map(t.display, t.entry_points()))}", entry_point=entry)
    state: dict[str, Any] = {
        "run_id": run_id, "template": t.name, "template_version": t.doc.get("version"),
        "template_digest": t.digest,
        "topic": topic, "language": language, "entry_point": entry, "current_stage": entry,
        "pipeline_state": t.pipeline["initial"], "paused_from": None,
        "consecutive_continue_count": 0, "slim_checkpoints": False, "checkpoints_opened": 0,
        "loop_count": 0, **({"override_rounds": {}} if t.doc.get("override_ladder") else {}), "checkpoint": None,
        "materials": {name: False for name in t.materials},
        "current_version": {}, "version_counters": {},
        "team": {role: None for role in t.doc.get("team", [])},
        "settings": recorded_settings,
        **({"pending_adjudication_activity_bindings": _initial_rows()} if t.doc.get("adjudication_activity") else {}),
        "created_at": now, "updated_at": now,
    }
    stages = {stage_id: new_stage(t, stage_id) for stage_id in t.stage_ids}
    summary = f"new run {run_id} ({t.name}) entering at stage {t.display(entry)}" + (f": {topic}" if topic else "")
    change = Change(summary, state=state, stages=stages)
    before = t.stage_ids[: t.index(entry)]
    guarded = [s for s in before if not t.skippable(s)]
    if guarded and mid_entry.declared(t):
        _carry_over(t, state, stages, change, guarded, entry, now, passport, confirm_skip,
                    check=lambda p: mid_entry.check_passport(t, guarded, entry, p, file))
        mid_entry.register(t, state, change, guarded, entry, now, brought or [])
    elif guarded:
        _carry_over(t, state, stages, change, guarded, entry, now, passport, confirm_skip)
        if t.doc.get("integrity_sole_source"):
            _what_it_stands_for(t, state, guarded, passport, file)
    elif mid_entry.declared(t):
        mid_entry.register_brought(t, state, change, entry, now, brought or [])
    for stage_id in before:
        if stage_id not in guarded:
            if not t.status.get("skipped"):
                raise IllegalTransition(f"template {t.name} cannot skip stages; enter at the first stage")
            stages[stage_id].update(status=t.status["skipped"], reason=f"mid-entry at stage {t.display(entry)}")
    run = RunData(run_id, state, stages)
    return run, change


def _carry_over(t: Template, state: dict[str, Any], stages: dict[str, dict[str, Any]], change: Change,
                guarded: list[str], entry: str, now: str, passport: dict[str, Any] | None,
                confirm_skip: bool, check: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Mid-entry past a never-skipped stage: only on a fresh VERIFIED passport the user confirms."""
    names = ", ".join(map(t.display, guarded))
    if passport is None:
        raise IllegalTransition(f"entering at stage {t.display(entry)} would skip stage {names}, which is "
                                "never skipped; pass {opt:passport} FILE (VERIFIED, integrity pass within "
                                f"{t.doc.get('passport_stale_hours', 24)} h) and {opt('confirm_skip')}")
    hours = t.doc.get("passport_stale_hours", 24)
    clock = datetime.datetime.fromisoformat(now.replace("Z", "+00:00"))
    status = materials.effective_status(passport, clock, hours)
    if status != "VERIFIED":
        raise IllegalTransition(f"the passport {passport.get('version_label')} is {status}; skipping stage "
                                f"{names} needs a VERIFIED passport with an integrity pass within {hours} h")
    if not confirm_skip:
        raise IllegalTransition(f"skipping stage {names} on passport {passport['version_label']} needs "
                                "the user's confirmation: add {opt:confirm_skip}")
    if check is not None:
        check(passport)
    label = passport["version_label"]
    spec = next(t.stage(s)["integrity"] for s in guarded if "integrity" in t.stage(s))
    series = t.series_by_name(spec.get("verifies_draft_series") or "")
    match = materials.LABEL_RE.match(label)
    if not series or not match or materials.label_for(series, int(match["n"])) != label:
        raise IllegalTransition(f"passport label {label!r} is not a version of the "
                                f"{spec.get('verifies_draft_series')} series")
    state["version_counters"][series["name"]] = int(match["n"])
    state["current_version"][series["name"]] = label
    for name in passport.get("materials") or series["materials"][:1]:
        state["materials"][name] = True
    if spec.get("verifies"):
        state["materials"][spec["verifies"]] = True
    change.passports[label] = {**passport, "series": series["name"]}
    for stage_id in guarded:
        stages[stage_id].update(
            status=t.status["done"], verdict="PASS", mode="passport",
            completed_at=now, checkpoint_confirmed=True,
            reason=f"mid-entry on VERIFIED passport {label} (integrity pass "
                   f"{passport.get('integrity_pass_date')}), confirmed by the user")


def _what_it_stands_for(t: Template, state: dict[str, Any], guarded: list[str], passport: dict[str, Any] | None,
                        file: dict[str, str] | None) -> None:
    """Mid-entry on a passport, by the rules of templates whose integrity materials come from nowhere
    else: the passport stands for content the user brings unchanged (its content_hash is the file's),
    and what it stands for is registered at entry (each skipped integrity stage's report), so the
    entry stage can start at once."""
    assert passport is not None
    if passport.get("content_hash"):
        mid_entry.same_content(passport, file)
    mid_entry.register_reports(t, state, guarded)


def _initial_rows() -> list[dict[str, Any]]:
    """A new run's adjudication rows."""
    return initial_rows()

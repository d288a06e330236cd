"""Creating runs as plain data, and reading a run back as one document."""
# Lazy imports: datetime (to date a passport where a run enters past a never-skipped stage) and the rules a run's
#   ARS document reads where its template declares them (failure modes, compliance and entry advisories, the inquiry):
#   `next` loads no datetime (tests/test_architecture.py), and a `stage` transition none of those rules.
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from statedir.engine import materials, mid_entry, run_settings
from statedir.engine.adjudication_rows import initial_rows
from statedir.engine.run_shape import new_stage  # noqa: F401 (a stage's record as it starts, named here too)
from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
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
    import datetime  # here: `next` and `status` never need it

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


def awaiting_resume(boundary_log: list[dict[str, Any]]) -> list[str]:
    """Boundary hashes no resume has consumed yet (computed, never stored; the reset-boundary log's
    rules are in statedir.engine.rules.reset_boundaries)."""
    consumed = {e.get("consumes_hash") or e.get("hash") for e in boundary_log if e.get("kind") == "resume"}
    return [e["hash"] for e in boundary_log if e.get("kind") == "boundary" and e["hash"] not in consumed]


def document(t: Template, run: RunData, passports: dict[str, dict[str, Any]],
             histories: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The whole run as one document (show yaml|json, get); `awaiting_resume` is computed from
    the reset-boundary log when it was read, never stored."""
    doc = {**run.state, "stages": run.stages, "passports": passports, "history": histories}
    if "reset_boundary" in histories:
        doc["awaiting_resume"] = awaiting_resume(histories["reset_boundary"])
    return doc


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
        from statedir.engine import failure_modes

        doc["failure_mode_audit"] = failure_modes.audit(t, histories.get("failure_modes", []))
    if run_settings.declared(t):  # the settings the run was made with, and the marks they put on it
        doc["settings"] = dict(state.get("settings") or {})
        marks = run_settings.marks(t, state)
        if marks:
            doc["marks"] = marks
    if t.doc.get("entry_advisories") or t.doc.get("compliance"):  # bound to the draft; STALE once it is not current
        from statedir.engine.rules import compliance, entry_advisories

        doc["stage5_advisories"] = entry_advisories.shown(t, run)
        doc["compliance_history"] = compliance.history(t, run)
    from statedir.engine.rules import inquiry

    branches = inquiry.published(t, state)
    if branches is not None:  # the branch ledger, published from its second branch on
        doc["inquiry_ledger"] = {"branches": branches, "entries": histories.get("inquiry_ledger", [])}
    for key in ("pending_adjudication_activity_bindings", "adjudication_activity_sources"):
        if key in state:
            doc[key] = state[key]
    return _strict(doc)  # type: ignore[no-any-return]


# The keys of a run document (json and ars shapes) that hold its histories.
HISTORY_KEYS = ("history", "revision_history", "integrity_history", "schema_validation_log",
                "collaboration_depth_history", "transition_history")


def without_histories(doc: dict[str, Any]) -> dict[str, Any]:
    """The run document without its histories: what a reader of the run's state needs."""
    return {key: value for key, value in doc.items() if key not in HISTORY_KEYS}


def _strict(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() else repr(value)
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value


def prereq_report(t: Template, run: RunData, stage_id: str) -> dict[str, Any]:
    return template_conditions.prerequisites(t, run.state, run.stages, t.resolve_stage(stage_id))


def _initial_rows() -> list[dict[str, Any]]:
    """A new run's adjudication rows."""
    return initial_rows()

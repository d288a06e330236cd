"""What a run's files leave out, and what reading fills in again: the written shape of
`state.yaml` and `stages/<stage>.yaml`.

A field left at its default when that default says nothing (null, false, 0, an empty list or
mapping) is not written; a stage with nothing to say (every field at its default, as `new`
makes it) has no file; an adjudication row not applicable, as every run's rows start, is left
out of `pending_adjudication_activity_bindings` (the key itself where all five are). Reading
fills each of them in from the template, so every rule, view and export sees the whole record.
Files of the older shape (every field, every stage file, all five rows) read the same.
Pure. A stage's record as it starts (`new_stage`) is made here; the run's defaults are those
`runs.new_run` starts a run with.
"""
from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

from statedir.engine import adjudication_rows
from statedir.engine.template import Template
from statedir.engine.transition_data import plain_copy
from statedir.files import schema

PENDING = "pending_adjudication_activity_bindings"
_NOTHING = (type(None), bool, int, list, dict)
# template digest -> (stage id -> its default record, the run defaults a new run starts with)
_DEFAULTS: dict[str, tuple[dict[str, dict[str, Any]], dict[str, Any]]] = {}


def new_stage(t: Template, stage_id: str) -> dict[str, Any]:
    """A fresh stage record with every field its kind declares, in a stable order."""
    spec = t.stage(stage_id)
    record: dict[str, Any] = {
        "id": stage_id, "name": spec["name"], "skill": spec.get("skill"), "agent": spec.get("agent"),
        "status": t.status["initial"], "mode": None, "outputs": [], "started_at": None,
        "completed_at": None, "checkpoint_confirmed": None, "checkpoint_type": None,
        "schema_validated": None, "assigned_to": None, "approval_gate": spec.get("approval_gate", False),
        "team_notes": None, "dialogue_log_ref": None, "reason": None,
    }
    if "integrity" in spec:
        record.update(verdict=None, refs_total=None, refs_verified=None, retry_count=0,
                      issues_found=None, issues_fixed=None, fail_loop_decision=None)
        if t.doc.get("fail_loop"):  # the FAIL-loop resolution's records (templates that declare it)
            record.update(issues_detail=[], extra_rounds=0, partially_unverified=False, unresolved_items=[])
    if stage_id in (t.doc.get("failure_modes") or {}).get("stages", []):
        record["failure_modes"] = None  # the failure-mode checklist recorded last, with the user's answers
    if "decision" in spec:
        record["decision"] = None
    if "revision" in spec:
        record.update(revision_round=None, items_total=None, items_addressed=None)
    return record


def _says_nothing(value: Any) -> bool:
    return value is None or value is False or (type(value) is int and value == 0) or value == [] or value == {}


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _defaults(t: Template) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    key = f"{t.digest}:{id(t.doc)}"
    if key not in _DEFAULTS:
        stages = {sid: new_stage(t, sid) for sid in t.stage_ids}
        state: dict[str, Any] = {
            "paused_from": None, "consecutive_continue_count": 0, "slim_checkpoints": False, "checkpoints_opened": 0,
            "loop_count": 0, **({"override_rounds": {}} if t.doc.get("override_ladder") else {}),
            "checkpoint": None, "team": {role: None for role in t.doc.get("team", [])},
        }
        _DEFAULTS[key] = stages, state
    return _DEFAULTS[key]


def stage_default(t: Template, stage_id: str) -> dict[str, Any]:
    """The record of a stage that has no file (a fresh copy)."""
    return plain_copy(_defaults(t)[0][stage_id])  # type: ignore[no-any-return]


def filled_stage(t: Template, stage_id: str, plain: dict[str, Any] | None) -> dict[str, Any]:
    """A stage's whole record from its file's data (None: no file): the fields left out at
    their defaults, after the file's own (a file of the older shape comes back as it is)."""
    default = _defaults(t)[0].get(stage_id)
    if plain is None:
        return stage_default(t, stage_id)
    if default is None or all(k in plain for k in default):
        return plain
    out = dict(plain)
    for key, value in default.items():
        if key not in out:
            out[key] = [] if value == [] and type(value) is list else {} if value == {} else value
    return out


def filled_state(t: Template, plain: dict[str, Any]) -> dict[str, Any]:
    """A run's whole state from state.yaml's data: the fields left out at their defaults, the
    team's unnamed roles, and the adjudication rows left out as not applicable."""
    defaults = _defaults(t)[1]
    out = plain
    for key, value in defaults.items():
        if key == "team":
            team = plain.get("team")
            if isinstance(team, dict) and all(role in team for role in value) or not value:
                continue
            out = dict(out) if out is plain else out
            out["team"] = {**value, **(team if isinstance(team, dict) else {})}
        elif key not in plain:
            out = dict(out) if out is plain else out
            out[key] = {} if value == {} else value
    if t.doc.get("adjudication_activity"):
        rows = _filled_rows(plain.get(PENDING))
        if rows is not None:
            out = dict(out) if out is plain else out
            out[PENDING] = rows
    return out


def _filled_rows(rows: Any) -> list[dict[str, Any]] | None:
    """The five rows from the written ones (None: nothing to fill, or rows of another shape,
    which stay as written for the contract's checks to name)."""
    if rows is None:
        return adjudication_rows.initial_rows()
    if not isinstance(rows, list) or len(rows) >= len(adjudication_rows.FAMILY_NAMES):
        return None
    families = [r.get("source_family") if isinstance(r, dict) and "capture_state" in r else None for r in rows]
    order = [name for name in adjudication_rows.FAMILY_NAMES if name in families]
    if None in families or families != order:
        return None
    written = dict(zip(families, rows, strict=True))
    return [written.get(row["source_family"], row) for row in adjudication_rows.initial_rows()]


def written_stage(t: Template, stage_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """What a stage file holds for `record`: the template's order of fields, less those at a
    default that says nothing (the id, name and status always)."""
    default = _defaults(t)[0].get(stage_id)
    if default is None:
        return record
    keep = ("id", "name", "status")
    out = {k: record[k] for k in default if k in record and
           (k in keep or not (k in default and _says_nothing(default[k]) and _same(record[k], default[k])))}
    out.update((k, v) for k, v in record.items() if k not in default)
    return out


def says_nothing(t: Template, stage_id: str, record: dict[str, Any]) -> bool:
    """Whether a stage's record is the one it starts with (a stage without a file)."""
    default = _defaults(t)[0].get(stage_id)
    return default is not None and record == default


def written_state(t: Template, state: dict[str, Any]) -> dict[str, Any]:
    """What state.yaml holds for `state`: its schema's order, less the fields at a default that says
    nothing, the unnamed team roles and the adjudication rows still not applicable."""
    defaults = _defaults(t)[1]
    out: dict[str, Any] = {}
    order = _state_order()
    ordered = [*(k for k in order if k in state), *(k for k in state if k not in order)]
    for key, value in ((k, state[k]) for k in ordered):
        if key == "team" and isinstance(value, dict):
            named = {role: person for role, person in value.items() if person is not None}
            if named:
                out[key] = named
        elif key == PENDING and t.doc.get("adjudication_activity") and adjudication_rows.canonical(value):
            initial = adjudication_rows.initial_rows()
            rows = [row for row, start in zip(value, initial, strict=True) if row != start]
            if rows:
                out[key] = rows
        elif not (key in defaults and _same(value, defaults[key]) and _says_nothing(value)):
            out[key] = value
    return out


def _state_order() -> dict[str, None]:
    """state.yaml's fields in the order its schema lists them (a new run's order)."""
    if not _ORDER:
        _ORDER.update(dict.fromkeys(schema.load_schema("run-state")["properties"]))
    return _ORDER


_ORDER: dict[str, None] = {}


def written(t: Template, rel: str, data: dict[str, Any]) -> dict[str, Any]:
    """A run file's data as written (state.yaml and stage files; anything else as it is)."""
    if rel.endswith("/state.yaml"):
        return written_state(t, data)
    parent, _, name = rel.rpartition("/")
    if parent.endswith("/stages") and name.endswith(".yaml"):
        return written_stage(t, name[:-5], data)
    return data


def files(t: Template | None, base: str, state: dict[str, Any] | None, stages: dict[str, dict[str, Any]],
          existing: Container[str] = ()) -> dict[str, Any]:
    """Run folder `base`'s state and stage files for these records, as written (with no template,
    whole): a stage with nothing to say gets no file unless it has one (`existing`)."""
    out: dict[str, Any] = {}
    if state is not None:
        out[f"{base}/state.yaml"] = state if t is None else written_state(t, state)
    for sid, record in stages.items():
        rel = f"{base}/stages/{sid}.yaml"
        if t is None:
            out[rel] = record
        elif rel in existing or not says_nothing(t, sid, record):
            out[rel] = written_stage(t, sid, record)
    return out


def unwritten(base: str, stages: dict[str, dict[str, Any]], files: Container[str],
              existing: Container[str]) -> list[str]:
    """The stage files a write leaves absent among those it decided (a new run's stages that
    have nothing to say)."""
    return [rel for sid in stages for rel in (f"{base}/stages/{sid}.yaml",) if rel not in files and rel not in existing]


def older_files(t: Template, base: str, state: dict[str, Any] | None, stages: dict[str, dict[str, Any]],
                read: Callable[[str], Any]) -> dict[str, Any]:
    """The state and stage files these records make as statedir wrote them before the written
    shape (every field, a file for every stage), relative to the files as `read` gives them
    (None: absent): what verify replays an older commit against."""
    out: dict[str, Any] = {}
    records = [(f"{base}/stages/{sid}.yaml", record, sid) for sid, record in stages.items()]
    if state is not None:
        records.append((f"{base}/state.yaml", state, None))
    for rel, record, sid in records:
        was = read(rel)
        if not isinstance(was, dict):
            out[rel] = record
            continue
        filled = filled_state(t, was) if sid is None else filled_stage(t, sid, was)
        out[rel] = unfilled(record, was, filled)
    return out


def unfilled(record: dict[str, Any], read: dict[str, Any] | None, filled: dict[str, Any] | None) -> dict[str, Any]:
    """`record` in the older shape, relative to the file it was read from (`read`, as written;
    `filled`, as reading filled it): every field, less those reading added that are unchanged.
    What statedir before the written shape wrote (verify replays its commits)."""
    if read is None or filled is None:
        return record
    return {k: v for k, v in record.items() if k in read or k not in filled or not _same(v, filled[k])}

"""The rules across a run's files that no single schema can express, as Problems:
current_stage names a stage that has its file; every stage of the template has its file and
each stage file is the stage its name says; every current_version label has its passport;
version counters are never behind a label; counters agree with the append-only logs."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from statedir.engine.template import Template
from statedir.files.schema import Problem

LABEL_N = re.compile(r"_v([1-9][0-9]*)$")


def _number(label: str) -> int:
    match = LABEL_N.search(label)
    return int(match[1]) if match else 0


def problems(root: Path, run_id: str, t: Template, state: dict[str, Any],
             logs: dict[str, list[dict[str, Any]]]) -> list[Problem]:
    """Everything inconsistent between `runs/<run_id>/state.yaml`, its stage and passport files
    and its logs (`logs`: name -> entries, as read)."""
    base = f"runs/{run_id}"
    state_file = f"{base}/state.yaml"
    out: list[Problem] = []
    stage_files = {p.stem for p in (root / base / "stages").glob("*.yaml")}  # a stage without one is pending
    for name in sorted(stage_files - set(t.stage_ids)):
        out.append(Problem(f"{base}/stages/{name}.yaml", "$", f"template {t.name} has no stage {name!r}"))
    passports = {p.stem for p in (root / base / "materials").glob("*.yaml")}
    counters = state.get("version_counters") or {}
    for series, label in sorted((state.get("current_version") or {}).items()):
        if label not in passports:
            out.append(Problem(state_file, f"$.current_version.{series}",
                               f"{label} has no passport file {base}/materials/{label}.yaml"))
        if _number(label) > counters.get(series, 0):
            out.append(Problem(state_file, f"$.version_counters.{series}",
                               f"is {counters.get(series, 0)}, behind the current version {label}"))
    for label in sorted(passports):
        series = t.series_of_label(label)
        if series is not None and _number(label) > counters.get(series, 0):
            out.append(Problem(state_file, f"$.version_counters.{series}",
                               f"is {counters.get(series, 0)}, behind the passport {label}"))
    out += _counters(t, base, state, logs)
    return out


def _counters(t: Template, base: str, state: dict[str, Any], logs: dict[str, list[dict[str, Any]]]) -> list[Problem]:
    """Counters can only have grown with entries in the logs (a rollback may leave the logs
    ahead, never behind)."""
    out = []
    opened = sum(1 for e in logs.get("checkpoints", []) if e.get("event") == "opened")
    if int(state.get("checkpoints_opened") or 0) > opened:
        out.append(Problem(f"{base}/state.yaml", "$.checkpoints_opened",
                           f"is {state.get('checkpoints_opened')}, but history/checkpoints.yaml records "
                           f"{opened} opened checkpoint(s)"))
    return out


def stage_fields(t: Template, base: str, stage_id: str, record: dict[str, Any]) -> list[Problem]:
    """Values the stage-file schema allows for some stage but not this one (a decision of
    another review stage, a verdict on a stage that has no integrity check)."""
    rel = f"{base}/stages/{stage_id}.yaml"
    spec = t.stage(stage_id)
    out = []
    decisions = spec.get("decision", {}).get("values", [])
    if record.get("decision") is not None and record["decision"] not in decisions:
        allowed = f"one of {', '.join(decisions)}" if decisions else "none"
        out.append(Problem(rel, "$.decision", f"{record['decision']!r} is no decision of stage "
                                              f"{t.display(stage_id)} ({allowed})"))
    if record.get("verdict") is not None and "integrity" not in spec:
        out.append(Problem(rel, "$.verdict", f"stage {t.display(stage_id)} has no integrity check, so no verdict"))
    return out


def stage_counters(base: str, stage_id: str, record: dict[str, Any],
                   logs: dict[str, list[dict[str, Any]]]) -> list[Problem]:
    """An integrity stage's retry_count is at most its FAIL entries in history/integrity.yaml;
    a stage file's id is its file name."""
    out = []
    rel = f"{base}/stages/{stage_id}.yaml"
    if record.get("id") != stage_id:
        out.append(Problem(rel, "$.id", f"is {record.get('id')!r}, but the file is stage {stage_id}"))
    fails = sum(1 for e in logs.get("integrity", []) if e.get("stage") == stage_id and e.get("verdict") == "FAIL"
                and e.get("event") != "resolution")
    if int(record.get("retry_count") or 0) > fails:
        out.append(Problem(rel, "$.retry_count", f"is {record.get('retry_count')}, but history/integrity.yaml "
                                                 f"records {fails} FAIL round(s) for stage {stage_id}"))
    return out


def undeclared_logs(root: Path, t: Template, base: str) -> list[Problem]:
    """A run holds the logs its template declares: a log folder of any other name, or an old
    single-file log of another name that holds entries, is reported (an old store's empty
    log files are not)."""
    history = root / base / "history"
    out = []
    for path in sorted(history.iterdir()) if history.is_dir() and not history.is_symlink() else []:
        name = path.name[:-5] if path.name.endswith(".yaml") else path.name
        if name in t.logs or (path.is_file() and path.read_bytes().partition(b"\n")[2].strip() == b""):
            continue
        rel = f"{base}/history/{path.name}"
        out.append(Problem(rel, "$", f"template {t.name} declares no {name} log (its runs hold "
                                     f"{', '.join(t.logs)}); add it to the template's `logs:`"))
    return out


def run_flow(t: Template, base: str, state: dict[str, Any], records: dict[str, dict[str, Any]]) -> list[Problem]:
    """Where the run stands must agree with its stages (a hand-resolved merge can leave it
    stuck): a stage in progress is the current stage, the run awaits confirmation exactly
    while a checkpoint is open (or is paused from awaiting it)."""
    rel = f"{base}/state.yaml"
    out = []
    active = t.status.get("active")
    current = state.get("current_stage")
    for stage_id, record in records.items():
        if active is not None and record.get("status") == active and stage_id != current:
            out.append(Problem(f"{base}/stages/{stage_id}.yaml", "$.status",
                               f"stage {t.display(stage_id)} is {active}, but the run's current stage is {current!r}"))
    awaiting, pipeline_state = t.pipeline.get("awaiting"), state.get("pipeline_state")
    checkpoint = state.get("checkpoint")
    if pipeline_state == awaiting and checkpoint is None:
        out.append(Problem(rel, "$.checkpoint", f"the run is {awaiting}, but no checkpoint is open: nothing "
                                                "could answer it"))
    paused_awaiting = pipeline_state == t.pipeline.get("paused") and state.get("paused_from") == awaiting
    if checkpoint is not None and pipeline_state != awaiting and not paused_awaiting:
        out.append(Problem(rel, "$.checkpoint", f"a checkpoint is open, but the run is {pipeline_state}, "
                                                f"not {awaiting}"))
    return out


def loaded_run(t: Template, base: str, state: dict[str, Any], records: dict[str, dict[str, Any]]) -> list[Problem]:
    """What a transition can see wrong in the files it has read (state.yaml and its stages),
    without reading a log: the checks of `validate` that need nothing more."""
    out = []
    for stage_id, record in records.items():
        if record.get("id") != stage_id:
            out.append(Problem(f"{base}/stages/{stage_id}.yaml", "$.id",
                               f"is {record.get('id')!r}, but the file is stage {stage_id!r}'s"))
        out += stage_fields(t, base, stage_id, record)
    counters = state.get("version_counters") or {}
    for series, label in sorted((state.get("current_version") or {}).items()):
        if isinstance(label, str) and _number(label) > counters.get(series, 0):
            out.append(Problem(f"{base}/state.yaml", f"$.version_counters.{series}",
                               f"is {counters.get(series, 0)}, behind the current version {label}"))
    return out + run_flow(t, base, state, records)

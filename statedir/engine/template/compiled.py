"""A template compiled into JSON Schemas: the generic run-file schemas with the template's
vocabularies as enums (stage ids, statuses, pipeline states, verdicts, decisions, checkpoint
types, material names, version-series labels), stored under `.schemas/<template>/<version>/`
so an editor completes and flags values offline, and registered for `validate`."""
from __future__ import annotations

import json
import re
from typing import Any

from statedir.engine.template import Template
from statedir.files import schema
from statedir.files.parse_cache import digest

RUN_KINDS = ("run-state", "stage", "passport", "log-checkpoints", "log-collaboration_depth", "log-failure_modes", "log-integrity",
             "log-reset_boundary", "log-revisions", "log-schema_validation", "log-transitions")
SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.'-]{0,63}/[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")


def scope(t: Template) -> str | None:
    """`<template>/<version>`: the folder of its schemas under `.schemas/`; None when the
    template has no usable version (its runs keep the generic schemas)."""
    value = f"{t.name}/{t.doc.get('version')}"
    return value if t.doc.get("version") is not None and SCOPE_RE.match(value) else None


def checkpoint_types() -> list[str]:
    """The checkpoint types statedir knows (the template schema's own list)."""
    stage = schema.load_schema("template")["properties"]["stages"]["items"]["properties"]
    return list(stage["checkpoint"]["enum"])


def _enum(node: dict[str, Any], values: list[Any], what: str) -> None:
    """Close a string field to `values` (keeping null where the field allowed it)."""
    types = node.get("type", [])
    nullable = "null" in (types if isinstance(types, list) else [types])
    node["enum"] = [*values, None] if nullable and None not in values else list(values)
    node["description"] = f"{what}: {', '.join(str(v) for v in values)}"


def _copied(doc: Any) -> Any:
    """A deep copy of JSON data, made as JSON (this module needs no copy, which a transition,
    asking only scope(), does without)."""
    return json.loads(json.dumps(doc))


def _closed_object(node: dict[str, Any], keys: list[str], value: dict[str, Any], what: str) -> None:
    node["properties"] = {key: _copied(value) for key in keys}
    node["additionalProperties"] = False
    node["description"] = f"{what}: {', '.join(keys)}"


def _labels(t: Template) -> dict[str, str]:
    """Each version series and the pattern of its labels (research_v{N} -> ^research_v[1-9][0-9]*$)."""
    out = {s["name"]: s["label"] for s in t.series}
    for name in t.materials:
        out.setdefault(t.series_of(name)["name"], t.series_of(name)["label"])
    return {name: "^" + re.escape(label).replace(re.escape("{N}"), "[1-9][0-9]*") + "$"
            for name, label in out.items()}


def compile_schemas(t: Template) -> dict[str, dict[str, Any]]:
    """kind -> the generic schema of that kind narrowed to `t`'s vocabularies."""
    stage_ids = list(t.stage_ids)
    ends = sorted(t.terminal_targets)
    decisions = sorted({v for s in t.stages for v in s.get("decision", {}).get("values", [])})
    verdicts = schema.load_schema("log-integrity")["$defs"]["entry"]["properties"]["verdict"]["enum"]
    labels = _labels(t)
    types = checkpoint_types()
    out = {kind: _copied(schema.load_schema(kind)) for kind in RUN_KINDS}

    state = out["run-state"]["properties"]
    state["template"] = {"const": t.name, "description": f"this run's template: {t.name}"}
    state["template_version"] = {"const": t.doc.get("version"), "description": "the template version the run uses"}
    if "topic" in t.required_run_fields:
        state["topic"] = {"type": "string", "minLength": 1,
                          "description": f"what the run is about ({t.name} needs one)"}
    _enum(state["current_stage"], stage_ids, "a stage of " + t.name)
    _enum(state["entry_point"], stage_ids, "an entry stage")
    _enum(state["pipeline_state"], list(t.pipeline.values()), "pipeline state")
    # The states a caller may ask for (the `pipeline` action): completion offers these alone.
    state["pipeline_state"]["x-requestable"] = [t.pipeline[k] for k in ("paused", "running", "aborted", "completed")
                                                if k in t.pipeline]
    _enum(state["paused_from"], list(t.pipeline.values()), "pipeline state")
    _closed_object(state["materials"], list(t.materials), {"type": "boolean"}, "materials")
    state["current_version"]["properties"] = {n: {"type": "string", "pattern": p} for n, p in labels.items()}
    state["current_version"]["additionalProperties"] = False
    _closed_object(state["version_counters"], list(labels), {"type": "integer", "minimum": 1}, "version series")
    _closed_object(state["team"], list(t.doc.get("team", [])), {"type": ["string", "null"]}, "team roles")
    if t.doc.get("run_settings"):
        _closed_object(state["settings"], list(t.doc["run_settings"]), {"type": "boolean"}, "run settings")
        state["settings"]["required"] = list(t.doc["run_settings"])
    open_checkpoint = state["checkpoint"]["anyOf"][0]["properties"]
    _enum(open_checkpoint["stage"], stage_ids, "a stage")
    _enum(open_checkpoint["type"], types, "checkpoint type")

    stage = out["stage"]["properties"]
    _enum(stage["id"], stage_ids, "a stage of " + t.name)
    _enum(stage["status"], list(t.statuses), "stage status")
    _enum(stage["verdict"], verdicts, "integrity verdict")
    _enum(stage["decision"], decisions, "review decision")
    _enum(stage["checkpoint_type"], types, "checkpoint type")

    passport = out["passport"]["properties"]
    passport["version_label"] = {"anyOf": [{"type": "string", "pattern": p} for p in labels.values()],
                                 "description": "a version label: " + ", ".join(s["label"] for s in t.series)}
    _enum(passport["series"], list(labels), "version series")
    passport["materials"]["items"] = {"enum": list(t.materials), "description": "a material of " + t.name}

    entry = out["log-checkpoints"]["$defs"]["entry"]["properties"]
    _enum(entry["stage"], stage_ids, "a stage")
    _enum(entry["type"], types, "checkpoint type")
    _enum(entry["next"], [*stage_ids, *ends], "a stage or end state")
    _enum(out["log-integrity"]["$defs"]["entry"]["properties"]["stage"],
          [s["id"] for s in t.stages if "integrity" in s], "an integrity stage")
    _enum(out["log-collaboration_depth"]["$defs"]["entry"]["properties"]["stage_id"], [*stage_ids, "pipeline"],
          "a stage, or pipeline")
    for kind, doc in out.items():
        _carry_rules(schema.load_schema(kind), doc)
        doc["$id"] = f"https://statedir.dev/schemas/{scope(t) or t.name}/{kind}.schema.json"
        doc["title"] = f"{doc.get('title', kind)} — template {t.name} {t.doc.get('version') or ''}".rstrip()
    return out


def _carry_rules(generic: Any, compiled: Any) -> None:
    """Give each property narrowed above the merge rule (`x-merge`) of the generic field it
    replaced: a property of an object the generic schema keys freely takes the rule of its
    additionalProperties."""
    if not isinstance(generic, dict) or not isinstance(compiled, dict):
        return
    if "x-merge" in generic:
        compiled.setdefault("x-merge", generic["x-merge"])
    props = compiled.get("properties")
    if isinstance(props, dict):
        known: dict[str, Any] = generic["properties"] if isinstance(generic.get("properties"), dict) else {}
        extra = generic.get("additionalProperties")
        for name, sub in props.items():
            _carry_rules(known.get(name, extra), sub)
    for key, value in compiled.items():
        if key == "properties":
            continue
        if isinstance(value, dict):
            _carry_rules(generic.get(key), value)
        elif isinstance(value, list) and isinstance(generic.get(key), list):
            for g, c in zip(generic[key], value, strict=False):
                _carry_rules(g, c)


# Template digest -> its compiled schemas' files, made once per process: a template compiles the same
# every time (its document and the package's generic schemas decide it), and verify meets it at every
# run's creation it replays.
_FILES: dict[str, dict[str, str]] = {}


def _digest(t: Template) -> str:
    return digest(json.dumps(t.doc, sort_keys=True, default=str).encode())


def schema_files(t: Template) -> dict[str, str]:
    """Store-relative path -> text of each compiled schema (nothing for an unversioned template)."""
    where = scope(t)
    if where is None:
        return {}
    key = _digest(t)
    if key not in _FILES:
        _FILES[key] = {f".schemas/{where}/{kind}.schema.json": json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
                       for kind, doc in compile_schemas(t).items()}
    return dict(_FILES[key])


def register(t: Template) -> dict[str, str]:
    """Register `t`'s compiled schemas with the validator; returns kind -> registered name."""
    docs = compile_schemas(t)
    key = _digest(t)[:12]
    names = {kind: f"{t.name}@{key}/{kind}" for kind in docs}
    for kind, doc in docs.items():
        schema.register(names[kind], doc)
    return names

"""The values a tool's argument takes where they form a vocabulary, as schema enums: read from
the templates the store holds (stage ids, statuses, decisions, pipeline states, checkpoint
responses, materials), and from the engine and views for the rest (integrity verdicts, observer
checkpoints, adjudication families, graph formats, the research ledger's statuses). No MCP SDK here.

A schema is one for every run, so a template's vocabulary is the union over the templates the
store holds (statedir's shipped ones and the store's own); a run takes its own template's, which
`next` and statedir://runs/<run_id>/stages list (the server's instructions say so once, UNION_NOTE,
not each of the dozen arguments).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from statedir.engine import adjudication_contract, template
from statedir.engine.rules import submissions
from statedir.errors import InvalidValue, StatedirError
from statedir.research import evidence, kinds
from statedir.views import graph_drawing

UNION_NOTE = ("An enum of stages, statuses, decisions or materials lists every template's; a run takes its "
              "own template's (`next` lists them as legal moves; statedir://runs/<run_id>/stages).")
SHOW_FORMATS = ("yaml", "json", "ars")  # `show --format` (the CLI checks the same three)

Templates = list[template.Template]


def held(root: Path) -> Templates:
    """The templates the store at `root` can run: statedir's shipped ones and the store's own
    (an unreadable one of the store's is left out: `validate` reports it)."""
    found = [template.load(name) for name in template.shipped()]
    folder = root / "templates"
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            found.append(template.load(str(path)))
        except StatedirError:
            continue
    return found


def signature(root: Path) -> tuple[tuple[str, int], ...]:
    """What changes when the store's own templates do (names and modification times)."""
    folder = root / "templates"
    if not folder.is_dir():
        return ()
    return tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.yaml")))


def _union(ts: Templates, values: Callable[[template.Template], Iterable[str]]) -> list[str]:
    return list(dict.fromkeys(str(v) for t in ts for v in values(t)))


def _stages(t: template.Template) -> list[str]:
    """A template's stage ids, one spelling each: an alias (3' for 3p) is taken as input, not offered."""
    return list(t.stage_ids)


def _integrity_stages(t: template.Template) -> list[str]:
    return [s["id"] for s in t.stages if "integrity" in s]


def _settable_states(t: template.Template) -> list[str]:
    """The pipeline states `pipeline` may set: the rest are statedir's to set as stages move."""
    return [t.pipeline[role] for role in ("paused", "running", "aborted", "completed")]


def _decisions(t: template.Template) -> list[str]:
    return [v for s in t.stages for v in s.get("decision", {}).get("values", [])]


def _series(t: template.Template) -> list[str]:
    return [*(s["name"] for s in t.series), *t.materials]


def vocabularies(ts: Templates) -> dict[str, tuple[list[str], bool]]:
    """Every vocabulary by name: its values, and whether they come from the templates (a union)."""
    of_templates: dict[str, Callable[[template.Template], Iterable[str]]] = {
        "stage": _stages, "integrity_stage": _integrity_stages,
        "observed_stage": lambda t: [*_stages(t), "pipeline"],
        "status": lambda t: t.statuses, "decision": _decisions, "pipeline_state": _settable_states,
        "response": lambda t: t.checkpoints.get("responses", []),
        "next": lambda t: [*_stages(t), t.pipeline["completed"], t.pipeline["aborted"]],
        "entry_point": lambda t: t.entry_points(), "material": lambda t: t.materials, "series": _series,
        "fail_loop_decision": lambda t: (t.doc.get("fail_loop") or {}).get("decisions", []),
        "checklist_stage": lambda t: [t.display(s) for s in (t.doc.get("failure_modes") or {}).get("stages", [])],
        "failure_mode": lambda t: [str(m["id"]) for m in (t.doc.get("failure_modes") or {}).get("modes", [])],
        "failure_mode_answer": lambda t: list((t.doc.get("failure_modes") or {}).get("answers", {})),
        "checkpoint_decision": lambda t: [str(o) for d in (t.doc.get("checkpoint_decisions") or {}).values()
                                          if not d.get("decides") for o in d["options"]],
        "checkpoint_pick": lambda t: [str(o) for d in (t.doc.get("checkpoint_decisions") or {}).values()
                                      if d.get("decides") for o in d["options"]],
        "quality": lambda t: (t.checkpoints.get("dashboard") or {}).get("quality", []),
    }
    fixed = {"verdict": submissions.VERDICTS, "observer_checkpoint": submissions.OBSERVER_CHECKPOINTS,
             "family": adjudication_contract.FAMILY_NAMES,
             "role": [r for f in adjudication_contract.FAMILIES for r in f.roles],
             "unavailable": adjudication_contract.UNAVAILABLE_REASONS,
             "graph_format": graph_drawing.FORMATS, "show_format": SHOW_FORMATS,
             "research_status": list(dict.fromkeys([*kinds.RUN_CLOSING_STATUSES, *kinds.HYPOTHESIS_STATUSES,
                                                    *kinds.EXPERIMENT_STATUSES])),
             "stance": evidence.STANCES, "confidence": evidence.CONFIDENCE, "screening": kinds.SCREENING}
    out = {name: (_union(ts, values), True) for name, values in of_templates.items()}
    out.update({name: (list(values), False) for name, values in fixed.items()})
    return out


# (tool, argument) -> the vocabulary its values come from.
ARGUMENTS = {
    ("stage", "stage"): "stage", ("stage", "status"): "status", ("stage", "decision"): "decision",
    ("prereq", "stage"): "stage", ("redo", "stage"): "stage", ("output", "stage"): "stage",
    ("resume", "stage"): "stage", ("integrity", "stage"): "integrity_stage", ("integrity", "verdict"): "verdict",
    ("resolve", "stage"): "integrity_stage", ("resolve", "decision"): "fail_loop_decision",
    ("checklist", "stage"): "checklist_stage", ("acknowledge", "stage"): "checklist_stage",
    ("acknowledge", "mode"): "failure_mode", ("acknowledge", "answer"): "failure_mode_answer",
    ("observe", "stage"): "observed_stage", ("observe", "checkpoint"): "observer_checkpoint",
    ("pipeline", "state"): "pipeline_state", ("confirm", "response"): "response", ("confirm", "next"): "next",
    ("confirm", "format"): "checkpoint_decision", ("confirm", "decision"): "checkpoint_pick",
    ("confirm", "quality"): "quality",
    ("new", "entry_point"): "entry_point", ("material", "names"): "material", ("versions", "material"): "series",
    ("bind", "family"): "family", ("bind", "role"): "role", ("bind", "unavailable"): "unavailable",
    ("graph", "format"): "graph_format", ("show", "format"): "show_format",
    ("research", "status"): "research_status", ("research", "stance"): "stance",
    ("research", "confidence"): "confidence", ("research", "screening_status"): "screening",
}


def with_enums(name: str, schema: dict[str, Any], vocab: dict[str, tuple[list[str], bool]]) -> dict[str, Any]:
    """Tool `name`'s input schema with each argument that has a vocabulary taking only its values."""
    properties = dict(schema["properties"])
    for argument, prop in properties.items():
        which = ARGUMENTS.get((name, argument))
        if which is None or not vocab[which][0]:
            continue
        values, _ = vocab[which]
        prop = dict(prop)
        if prop.get("type") == "array":
            prop["items"] = {**prop["items"], "enum": values}
        else:
            prop["enum"] = values
        properties[argument] = prop
    return {**schema, "properties": properties}


def with_values(exc: InvalidValue, schema: dict[str, Any]) -> InvalidValue:
    """A required argument left out (`exc`), with the values its enum in `schema` (the tool's listed
    input schema) offers: `stage: status is required` names the statuses."""
    argument = exc.details.get("argument")
    prop = schema.get("properties", {}).get(argument) if isinstance(argument, str) else None
    values = (prop.get("enum") or prop.get("items", {}).get("enum")) if isinstance(prop, dict) else None
    if not values or f"{argument} is required" not in exc.message:
        return exc
    return InvalidValue(f"{exc.message} (one of {', '.join(map(str, values))}; `next` lists a run's legal ones)",
                        **exc.details, allowed=list(values))

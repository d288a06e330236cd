"""The values a tool's argument takes where they form a vocabulary, as schema enums: read from
the templates the store holds (stage ids, statuses, decisions, pipeline states, checkpoint
responses, materials), and from the engine and views for the rest (integrity verdicts, observer
checkpoints, adjudication families, graph formats, the research ledger's statuses), all of them the
API's (statedir.api.vocabularies). No MCP SDK here.

A schema is one for every run, so a template's vocabulary is the union over the templates the
store holds (statedir's shipped ones and the store's own); a run takes its own template's, which
`next` and statedir://runs/<run_id>/stages list (the server's instructions say so once, UNION_NOTE,
not each of the dozen arguments).
"""
from __future__ import annotations

from typing import Any

from statedir.errors import InvalidValue

UNION_NOTE = ("An enum of stages, statuses, decisions or materials lists every template's; a run takes its "
              "own template's (`next` lists them as legal moves; statedir://runs/<run_id>/stages).")


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

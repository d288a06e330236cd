"""A run as its readers ask for it: the whole run as one document (`show`, `get`) and the reset
boundaries awaiting a resume. Pure. Apart from the making of a run (statedir.engine.runs), which a
reader never needs, and from the upstream State Tracker's shape (statedir.engine.tracker_document)."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import Template
from statedir.engine.transition_data import RunData


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


# The keys of a run document (json and ars shapes) that hold its histories.
HISTORY_KEYS = ("history", "revision_history", "integrity_history", "schema_validation_log",
                "collaboration_depth_history", "transition_history")


def without_histories(doc: dict[str, Any]) -> dict[str, Any]:
    """The run document without its histories: what a reader of the run's state needs."""
    return {key: value for key, value in doc.items() if key not in HISTORY_KEYS}

"""The research tools' output schemas, read off the ledger's record schemas
(schemas/research-<kind>.schema.json): a write returns the record it made or changed and its
commit; `research_query` the records found by kind, each held to its kind's fields;
`research_validate`, `research_rebuild_index` and `research_report` their own shapes. No MCP SDK here."""
from __future__ import annotations

from typing import Any

from statedir.api import places

# Each research action -> the kind of record its result is.
RECORD_OF = {
    "create-project": "projects", "create-question": "questions", "start-run": "runs", "complete-run": "runs",
    "answer-question": "questions", "abandon-question": "questions", "record-result": "results",
    "record-claim": "claims", "create-hypothesis": "hypotheses", "set-hypothesis-status": "hypotheses",
    "create-experiment": "experiments", "set-experiment-status": "experiments", "create-source": "sources",
    "set-source-screening": "sources", "set-source-evidence-tier": "sources", "create-evidence": "evidence",
}
KINDS = ("projects", "questions", "hypotheses", "experiments", "runs", "sources", "evidence", "results", "claims")
_S_NULL = {"type": ["string", "null"]}
# Fields a write's result adds to its record.
_ADDED: dict[str, dict[str, dict[str, Any]]] = {
    "create-source": {"duplicate_hint": {}, "deduplicated": {"type": "boolean"},
                      "ignored": {"type": "array", "items": {"type": "string"}}},
    "start-run": {"created": {"type": "array", "items": {"type": "string"}}},
}


def _field(prop: dict[str, Any]) -> dict[str, Any]:
    """A record field's schema as an output schema keeps it: its type and values, no prose."""
    return {key: prop[key] for key in ("type", "enum") if key in prop}


def _record(kind: str) -> dict[str, Any]:
    doc = places.schema(f"research-{kind}")
    return {name: _field(prop) for name, prop in doc.get("properties", {}).items()}


def schema_of(action: str) -> dict[str, Any]:
    """Research action `action`'s output schema."""
    if action in RECORD_OF:
        properties = {**_record(RECORD_OF[action]), "commit": _S_NULL, **_ADDED.get(action, {})}
        return {"type": "object", "required": ["id", "commit"], "properties": properties}
    if action == "query":
        return {"type": "object", "properties": {kind: {"type": "array", "items": {
            "type": "object", "properties": _record(kind)}} for kind in KINDS}}
    if action == "validate":
        return {"type": "object", "required": ["violations", "clean"],
                "properties": {"violations": {"type": "array", "items": {"type": "object"}},
                               "clean": {"type": "boolean"}}}
    if action == "rebuild-index":
        return {"type": "object", "required": ["rebuilt", "records"],
                "properties": {"rebuilt": {"type": "string"}, "shards_scanned": {"type": "integer"},
                               "files_read": {"type": "integer"},
                               "records": {"type": "object", "additionalProperties": {"type": "integer"}}}}
    return {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}  # report

"""Each tool's output schema, and a result's structured content: the --json document the command
prints. A JSON object is itself the structured content; any other document (a list, a value) is
`{"result": document}`, as are `get` and `bus_get` always (their value may be anything); text that
is not JSON is `{"text": ...}`. A refusal's is the common error document. No MCP SDK here.
"""
from __future__ import annotations

import json
from typing import Any

_S: dict[str, Any] = {"type": "string"}
_S_NULL: dict[str, Any] = {"type": ["string", "null"]}
_B: dict[str, Any] = {"type": "boolean"}
_I: dict[str, Any] = {"type": "integer"}
_OBJECTS: dict[str, Any] = {"type": "array", "items": {"type": "object"}}
_STRINGS: dict[str, Any] = {"type": "array", "items": _S}


def _object(required: tuple[str, ...] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


def _wrapped(result: dict[str, Any]) -> dict[str, Any]:
    return _object(("result",), result=result)


ERROR = _object(("error",), error=_object(("code", "message", "details"), code=_S, message=_S,
                                          details={"type": "object"}))
_ANY: dict[str, Any] = {}
# A transition of a run: the commit it made (null: nothing to change), what it did, and each
# command's own fields (engine/rules/: `draft.change(summary, now, **result)`),
# declared per tool. The fields any transition may add (COMMON: engine/transaction.py) are said once,
# in the server's instructions, not in each schema (every agent reads every listed schema): a schema
# without additionalProperties leaves the document open to them.
_TRANSITION_FIELDS: dict[str, dict[str, Any]] = {"run_id": _S, "commit": _S_NULL, "summary": _S}
COMMON = {"changed": _B, "warnings": _STRINGS, "warning": _S, "checkpoint": {"type": "object"}}
COMMON_NOTE = ("A write's result: run_id, commit (null: nothing to change), summary, its own fields, and where "
               "they apply changed, warning (one sentence), warnings (a list) and checkpoint (the one it opened); "
               "read every warning.")
# a confirm's: where it leads, the materials the next stage lacks, the stage's schema check where it failed
_STARTS_A_STAGE: dict[str, dict[str, Any]] = {"next": _S, "missing_recommended": _STRINGS,
                                              "schema_check": {"type": "object"}}
_CONFIRMS = {**_STARTS_A_STAGE, "held": _S}  # a regressed quality: the checkpoint held for the user
_OWN_FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "confirm": _CONFIRMS, "resume": _STARTS_A_STAGE, "observe": {"flagged": _STRINGS},  # resume answers the boundary's checkpoint
    "material": {"version_label": _S, "stale": _STRINGS}, "integrity": {"version_label": _S},
    "revision": {"round": _I}, "loop": {"loop_count": _I}, "redo": {"bumped": _ANY, "reset": _OBJECTS},
    "resolve": {"decision": _S, "unresolved_items": _ANY, "override_round": _I},
    "checklist": {"blocks": _B, "blocking": _STRINGS, "warned": _STRINGS},
    "acknowledge": {"mode": _S, "answer": _S, "blocking": _STRINGS, "override_round": _I},
    "contract": {"part": _S, "sha256": _S, "outcome": _S, "then": _S},
    "advisory": {"kind": _S, "version_label": _S, "refused_classes": _STRINGS},
    "compliance": {"decision": _S, "round": _I, "capped_from": _S, "override_round": _I},
    "inquiry": {"branch": _S, "branches": _I, "published": _B},
}
TRANSITIONS = ("new", "stage", "confirm", "material", "output", "integrity", "revision", "loop", "observe",
               "pipeline", "set", "redo", "resume", "rollback", "resolve", "checklist", "acknowledge", "contract",
               "advisory", "compliance", "inquiry")


def transition(name: str) -> dict[str, Any]:
    """The output schema of transition `name`: the fields every transition may return, and its own."""
    return _object(("run_id", "commit", "summary"), **_TRANSITION_FIELDS, **_OWN_FIELDS.get(name, {}))


_BUS_WRITE = _object(("session", "summary", "changed", "commit"), session=_S, run_id=_S, path=_S, field=_S,
                     value=_ANY, length=_I, summary=_S, changed=_B, commit=_S_NULL, warnings=_STRINGS)
_SIGNERS_WRITE = _object(("commit", "summary"), commit=_S_NULL, summary=_S, actor=_S_NULL, signers=_I,
                         acknowledgers=_STRINGS)
_ANY_OBJECT: dict[str, Any] = {"type": "object"}

SCHEMAS: dict[str, dict[str, Any]] = {
    **{name: transition(name) for name in TRANSITIONS},
    "bind": _object(("summary",), **_TRANSITION_FIELDS, **COMMON, family=_S, capture_state=_S, artifacts=_I,
                    dropped=_ANY,
                    sources=_ANY),
    "seal": _object(("summary",), run_id=_S, commit=_S_NULL, summary=_S),
    "bus_init": _BUS_WRITE, "bus_set": _BUS_WRITE, "bus_append": _BUS_WRITE, "bus_clear": _BUS_WRITE,
    "bus_get": _wrapped({"description": "The session (an object) or the field's value; null when missing."}),
    "get": _wrapped({"description": "The value at the path: any JSON value."}),
    "signers_add": _SIGNERS_WRITE, "signers_remove": _SIGNERS_WRITE, "signers_acknowledgers": _SIGNERS_WRITE,
    "signers_list": _object(result=_OBJECTS, text=_S),
    "sync": _object(("remote", "branch", "status", "pushed", "commit", "summary"), remote=_S, branch=_S,
                    status={"enum": ["up_to_date", "pushed", "fast_forward", "merged"]}, pushed=_B, commit=_S_NULL,
                    attempts=_I, summary=_S),
    "doctor": _object(("findings",), findings=_OBJECTS, repaired={"type": ["array", "boolean", "integer"]},
                      backup=_S_NULL),
    "runs": _object(result=_OBJECTS),
    "templates": _object(result=_OBJECTS, name=_S, stages=_OBJECTS, statuses=_OBJECTS,
                         pipeline_states={"type": "object"}, checkpoint_responses=_STRINGS),
    # the run's whole state document (its fields are the run schema's, statedir://templates/<name>)
    "show": {**_object(run_id=_S, template=_S, pipeline_state=_S, current_stage=_S_NULL,
                       stages={"type": "object"}), "additionalProperties": True},
    "status": _object(("run_id", "line"), run_id=_S, template=_S, topic=_S,
                      pipeline_state=_S, current_stage=_S_NULL, line=_S, dashboard=_S, stages=_OBJECTS,
                      checkpoint={"type": ["object", "null"]}, integrity=_OBJECTS, reviews=_OBJECTS,
                      settings={"type": "object"}, marks=_STRINGS, advisories=_STRINGS, compliance=_STRINGS),
    "next": _object(("run_id", "moves", "blocked"), run_id=_S, pipeline_state=_S, current_stage=_S_NULL,
                    moves=_OBJECTS, blocked=_OBJECTS, advisories=_OBJECTS),
    "prereq": _object(("prerequisites_met", "missing_required", "missing_recommended"), prerequisites_met=_B,
                      missing_required={"type": "array"}, missing_recommended={"type": "array"}, warning=_S_NULL),
    "log": _object(result=_OBJECTS, entries=_OBJECTS, next_cursor=_S_NULL),  # a list, or a page of one
    "init": _object(("store", "created"), store=_S, created=_B, commit=_S_NULL),
    "validate": _object(("valid", "errors"), valid=_B, checked=_I, errors=_OBJECTS),
    "graph": _object(("format", "graph"), run_id=_S_NULL, template=_S, format=_S, graph=_S),
    "diff": _object(("run_id", "changes"), run_id=_S, changes=_OBJECTS),
    "versions": _object(("result",), result=_OBJECTS),
    "verify": _object(("clean", "findings"), clean=_B, checked=_I, findings=_OBJECTS, not_counted=_OBJECTS),
}
ALWAYS_WRAPPED = frozenset({"get", "bus_get"})


def schema_of(name: str) -> dict[str, Any]:
    """Tool `name`'s output schema (a tool not in the table: any object, e.g. text as {"text": ...})."""
    return SCHEMAS.get(name, _ANY_OBJECT)


def summary_line(name: str, doc: dict[str, Any]) -> str:
    """The one line a result's text content says (the structured content holds the document):
    its `summary` where it has one, else what it is; and its warnings."""
    if name.startswith("research_") and isinstance(doc.get("id"), str):
        line = _research_line(name, doc)
    elif isinstance(doc.get("summary"), str):
        line = doc["summary"]
    elif isinstance(doc.get("line"), str):
        line = doc["line"]
    elif name == "next" and isinstance(doc.get("moves"), list):
        line = f"{len(doc['moves'])} legal moves, {len(doc.get('blocked') or [])} blocked"
    elif set(doc) == {"result"}:
        value = doc["result"]
        line = f"{name}: {len(value)} items" if isinstance(value, list) else f"{name}: {json.dumps(value)[:200]}"
    elif set(doc) == {"text"} and isinstance(doc["text"], str):
        return doc["text"] if "\n" not in doc["text"].strip() else f"{name}: {len(doc['text'].splitlines())} lines"
    else:
        line = f"{name}: " + ", ".join(doc)[:200]
    commit = doc.get("commit")
    line = f"{line} (commit {commit[:12]})" if isinstance(commit, str) else line
    # a warning is in the line too: a client that shows the model only the text must not hide it
    said = [doc["warning"]] if isinstance(doc.get("warning"), str) else []
    listed = doc.get("warnings")
    said += [w for w in listed if isinstance(w, str)] if isinstance(listed, list) else []
    return "".join([line, *(f"; warning: {w}" for w in said)]).replace("\n", " ")


def _research_line(name: str, doc: dict[str, Any]) -> str:
    """A research record's line: the record, its status, and what the call did beside it (the
    placeholders `research_start_run` made; a known DOI's existing source and the fields ignored)."""
    line = f"{name}: {doc['id']}" + (f" ({doc['status']})" if isinstance(doc.get("status"), str) else "")
    if doc.get("created"):
        line += f", made with it: {', '.join(map(str, doc['created']))}"
    if doc.get("deduplicated") is True:
        ignored = ", ".join(map(str, doc.get("ignored") or [])) or "none"
        line += f"; deduplicated: the existing record of this DOI, nothing written (fields ignored: {ignored})"
    return line


def structured(name: str, text: str, is_error: bool = False) -> dict[str, Any]:
    """The structured content of a result printed as `text` (a refusal: its error document)."""
    try:
        doc = json.loads(text)
    except ValueError:  # text, or nothing (allowed_signers with no signer)
        return {"text": text}
    if isinstance(doc, dict) and (is_error or name not in ALWAYS_WRAPPED):
        return doc
    return {"result": doc}

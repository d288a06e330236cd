"""What an agent reads, kept to what it needs: a refusal's moves cut to those that fix this
refusal (the full list is one `next` away), and `show` as the current stage and what it needs
(the whole run on request). Plain data over the documents the commands print; no MCP SDK here."""
from __future__ import annotations

from typing import Any

# The run's fields `show` keeps in its short form, beside the current stage.
SHOWN = ("run_id", "template", "topic", "current_stage", "pipeline_state", "checkpoint", "loop_count",
         "current_version")
WHOLE = "whole"  # show's argument for the whole run
WHOLE_SCHEMA = {"type": "boolean", "default": False,
                "description": "Every stage (else the current stage and what it needs)."}
# Moves that end or pause a run never fix a refusal: left to `next`.
_NEVER_A_FIX = frozenset({"pipeline"})


def refusal_moves(doc: dict[str, Any], command: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The refusal `doc` of a call to `command` (its first word) with `arguments`, its
    `details.moves` cut to the moves that fix it. A call naming a stage: that stage's moves of the
    same command that allow the values the call gave (`integrity 2.5 PASS` refused for its actor:
    the move naming the actor that may), else any move leading the run on (a closed stage's fix is
    the open checkpoint's `confirm`, not another stage's `blocked`), else that stage's moves of the
    command. A call naming none: the same command's moves, else those leading the run on. A `redo`
    leads on only for the stage the call named (a `confirm` with no checkpoint open is not fixed by
    redoing stages 1 to 3'); where nothing fixes it, no move, and `all_moves` says where they are.
    `details.more_moves` counts the rest; `details.all_moves` names the call that lists them."""
    error = doc.get("error")
    details = error.get("details") if isinstance(error, dict) else None
    moves = details.get("moves") if isinstance(details, dict) else None
    if not isinstance(moves, list) or not all(isinstance(m, dict) for m in moves):
        return doc
    same = [m for m in moves if m.get("command") == command]
    stage = arguments.get("stage")
    of_stage = [m for m in same if stage in (m.get("allowed") or {}).get("stage", [])]
    # a `redo` leads the run back: a fix only for the stage the call named (new outputs on a closed stage)
    leading = [m for m in moves if m.get("leads_to") and m.get("command") not in _NEVER_A_FIX
               and (m.get("command") != "redo" or stage in (m.get("allowed") or {}).get("stage", []))]
    if stage is not None:
        fixes = [m for m in of_stage if _allows(m, arguments)] or leading or of_stage or same
    else:
        fixes = same or leading
    kept = {**details, "moves": fixes}
    if len(fixes) < len(moves):
        kept["more_moves"] = len(moves) - len(fixes)
        if isinstance(details.get("run_id"), str):
            kept["all_moves"] = f"next {{run_id: {details['run_id']}}}"
    return {**doc, "error": {**error, "details": kept}}


def role_fix(doc: dict[str, Any]) -> dict[str, Any]:
    """A rule's PERMISSION_DENIED (`details.action`: what this server's role may not do) saying how
    the work gets done over MCP: by the agent in the role that may, on a server started for it."""
    error = doc.get("error")
    details = error.get("details") if isinstance(error, dict) else None
    if not (isinstance(details, dict) and error.get("code") == "PERMISSION_DENIED" and details.get("action")
            and isinstance(details.get("allowed"), list) and details["allowed"]
            and isinstance(error.get("message"), str) and "server" not in error["message"]):  # said already
        return doc
    roles = ",".join(map(str, details["allowed"][:1]))
    said = (f"{error['message']}; over MCP that is another agent's work, on a server started for its role "
            f"(`statedir mcp --role {roles}`): hand it over, do not retry here")
    return {**doc, "error": {**error, "message": said}}


def _allows(move: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Whether `move` allows each value the call gave that the move lists values for."""
    allowed = move.get("allowed") or {}
    return all(arguments[name] in values for name, values in allowed.items()
               if isinstance(values, list) and isinstance(arguments.get(name), str | int | float))


def brief_show(doc: dict[str, Any], prereq: dict[str, Any] | None) -> dict[str, Any]:
    """`show`'s short form: the run's state, its current stage whole (its fields that are set),
    every stage's status, and what the current stage needs (`prereq`'s missing materials)."""
    out = {key: doc[key] for key in SHOWN if key in doc}
    stages = doc.get("stages")
    if isinstance(stages, dict):
        current = stages.get(doc.get("current_stage"))
        if isinstance(current, dict):
            out["stage"] = {key: value for key, value in current.items() if value not in (None, [], {})}
        out["stages"] = {sid: s.get("status") for sid, s in stages.items() if isinstance(s, dict)}
    materials = doc.get("materials")
    if isinstance(materials, dict):
        out["materials_registered"] = [name for name, held in materials.items() if held]
    if prereq is not None:
        out["needs"] = {key: prereq.get(key) for key in ("missing_required", "missing_recommended")}
    out["more"] = "show {run_id, whole: true} for every stage; history: true for the whole run with its histories"
    return out


UNSERVED = "unserved"  # a move's key naming the --tools group its tool is in, where this server lacks it


def unserved_moves(doc: dict[str, Any], served: set[str], group_of: dict[str, str]) -> dict[str, Any]:
    """`next`'s document (or a refusal's) with each move whose tool this server does not serve
    marked with that tool's group (`unserved: control`: the server is restarted with --tools
    including it, or the move is left to a server that has it): advice an agent cannot take is said so."""
    def marked(moves: Any) -> Any:
        if not isinstance(moves, list):
            return moves
        return [{**m, UNSERVED: group_of[m["command"]]} if isinstance(m, dict) and m.get("command") not in served
                and m.get("command") in group_of else m for m in moves]
    out = {**doc, "moves": marked(doc["moves"])} if "moves" in doc else dict(doc)
    error = out.get("error")
    if isinstance(error, dict) and isinstance(error.get("details"), dict) and "moves" in error["details"]:
        out["error"] = {**error, "details": {**error["details"], "moves": marked(error["details"]["moves"])}}
    return out

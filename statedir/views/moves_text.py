"""`statedir next` for people: each legal move as the command line that takes it, with its
actor, and what blocks the rest."""
from __future__ import annotations

from typing import Any

# Each command's positional arguments, in the command line's order; every other argument is
# an option spelled `--name-with-dashes`.
POSITIONAL = {"stage": ("stage", "status"), "output": ("stage",), "pipeline": ("state",), "set": ("field", "value"),
              "material": ("names",), "integrity": ("stage", "verdict"), "redo": ("stage",), "resume": ("hash",),
              "resolve": ("stage", "decision"), "checklist": ("stage",), "acknowledge": ("stage", "mode", "answer"),
              "contract": ("stage", "part"), "advisory": ("kind",), "compliance": ("stage",)}
FLAGS = frozenset({"override"})  # options that take no value
# What a free argument's placeholder says it takes.
PLACEHOLDER = {"refs_total": "N", "refs_verified": "N", "items_total": "N", "reason": "TEXT", "report": "FILE",
               "output": "TEXT", "value": "VALUE", "item": "MODE=OUTCOME...", "items_addressed": "N",
               "pending": "ITEM", "issues_found": "N", "issues_fixed": "N", "issue": "SEVERITY:TYPE:DESCRIPTION",
               "file": "FILE", "upstream": "LABEL", "evidence": "MODE=TEXT", "unavailable": "CODE"}
SHOWN_VALUES = 6  # more allowed values than this are named on a line of their own


def _value(name: str, values: list[Any] | None, long: list[str]) -> str:
    if values is None:
        return PLACEHOLDER.get(name, name.upper())
    if len(values) > SHOWN_VALUES:
        long.append(f"{name.upper()}: {', '.join(map(str, values))}")
        return name.upper() + ("..." if name == "names" else "")
    return "|".join(map(str, values))


def command_line(run_id: str, move: dict[str, Any]) -> tuple[str, list[str]]:
    """The command line of a move, and the lines naming long lists of allowed values."""
    command, allowed, required = move["command"], move["allowed"], move["args"]
    long: list[str] = []
    words = ["statedir", command, run_id]
    positional = POSITIONAL.get(command, ())
    for name in positional:
        if name in required or name in allowed:
            words.append(_value(name, allowed.get(name), long))
    optional = [n for n in move.get("optional", ()) if n not in required and n not in allowed]
    for name in [*required, *(n for n in allowed if n not in required), *optional]:
        if name in positional:
            continue
        option = f"--{name.replace('_', '-')}" + ("" if name in FLAGS else f" {_value(name, allowed.get(name), long)}")
        words.append(option if name in required else f"[{option}]")
    return " ".join(words), long


def _where(current: Any, pipeline_state: Any) -> str:
    return f"stage {current}, {pipeline_state}" if current else str(pipeline_state)


def render(result: dict[str, Any]) -> str:
    """The moves, aligned by actor, then what is blocked and what it needs."""
    run_id = result["run_id"]
    lines = [f"run {run_id}: {_where(result.get('current_stage'), result.get('pipeline_state'))}"]
    if result.get("rules"):
        lines.append(f"rules: {result['rules']}")
    if not result["moves"]:
        lines.append("no legal move: the run has ended" if result.get("pipeline_state") in ("completed", "aborted")
                     else "no legal move")
    else:
        lines.append("moves (actor, then the command):")
        width = max(len(m["actor"]) for m in result["moves"])
        for move in result["moves"]:
            text, long = command_line(run_id, move)
            leads = move.get("leads_to")
            then = f"  -> {_where(leads['current_stage'], leads['pipeline_state'])}" if leads else ""
            lines.append(f"  {move['actor'].ljust(width)}  {text}{then}" + ("  (likely next)" if move.get("likely") else ""))
            lines += [f"  {' ' * width}      {line}" for line in long]
            if move.get("note"):
                lines.append(f"  {' ' * width}      note: {move['note']}")
    if result["blocked"]:
        lines.append("blocked:")
        for entry in result["blocked"]:
            text, _ = command_line(run_id, entry["move"])
            lines.append(f"  {text}")
            lines += [f"      needs: {need}" for need in entry["needs"]]
    if result.get("advisories"):  # the Stage 5 entry advisories and the draft each is bound to
        lines.append("advisories: " + "; ".join(f"{a['kind']} for {a['version_label']} [{a['binding']}]"
                                                for a in result["advisories"]))
    return "\n".join(lines)

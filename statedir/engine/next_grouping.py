"""How `statedir next` lists what the rules answered (statedir.engine.next_moves): the answered
candidates gathered into as few moves as say the same, each with its required and optional
arguments, in the order that advances the run first."""
from __future__ import annotations

from typing import Any

from statedir.engine import next_gates
from statedir.engine.move_candidates import Candidate

# The order moves are listed in: what advances the run first, bookkeeping last.
ORDER = ("confirm", "stage", "integrity", "checklist", "acknowledge_mode", "resolve", "contract", "advisory", "compliance",
         "compliance_override", "revision", "output",
         "material", "observe", "loop", "redo", "resume", "pipeline", "set")
# Arguments the caller writes (numbers, free text), by command: the CLI and the MCP tool require
# them besides the enumerated ones a move lists with their values.
FREE = {"integrity": ("refs_total", "refs_verified"), "revision": ("items_total",), "output": ("output",),
        "observe": ("report",), "set": ("value",), "redo": ("reason",), "checklist": ("item",), "contract": ("file",),
        "advisory": ("file",), "compliance": ("report",),
        "compliance_override": ("override",), "inquiry": ("branch", "note")}
# Each command's optional arguments that change what a move records (a move lists them as `optional`:
# followed with its required `args` alone, a revision round records 0 items addressed).
OPTIONAL = {"revision": ("items_addressed", "pending"), "integrity": ("issues_found", "issues_fixed", "issue"),
            "material": ("file", "upstream"), "checklist": ("evidence",),
            "advisory": ("unavailable",)}


class Found:
    """One answered candidate: where it leads (a legal move), or what it needs (a blocked one)."""

    __slots__ = ("candidate", "leads_to", "needs", "extra")

    def __init__(self, candidate: Candidate, leads_to: dict[str, Any] | None = None, needs: tuple[str, ...] = (),
                 extra: dict[str, Any] | None = None) -> None:
        self.candidate, self.leads_to, self.needs, self.extra = candidate, leads_to, needs, extra or {}


def identity(c: Candidate) -> tuple[Any, ...]:
    """What a move is, its optional details aside: a refused move this names is not blocked
    when the same move is legal with other details."""
    keep = {"stage": ("stage", "status"), "confirm": ("next",)}.get(c.command, tuple(c.shown))
    return (c.command, c.actor, *(c.shown.get(k) for k in keep))


def _shape(found: Found) -> tuple[Any, ...]:
    c = found.candidate
    fixed = tuple((k, v) for k, v in c.shown.items() if k not in c.vary)
    return (c.command, c.actor, tuple(c.shown), fixed, c.reason is not None, repr(found.leads_to), found.needs,
            repr(found.extra))


def _bucketed(found: list[Found]) -> list[list[Found]]:
    buckets: dict[tuple[Any, ...], list[Found]] = {}
    for item in found:
        buckets.setdefault(_shape(item), []).append(item)
    rank = {command: i for i, command in enumerate(ORDER)}
    return sorted(buckets.values(), key=lambda b: rank.get(b[0].candidate.command, len(ORDER)))


def grouped(found: list[Found]) -> list[dict[str, Any]]:
    out = []
    for bucket in _bucketed(found):
        for shown in _merged([f.candidate.shown for f in bucket], bucket[0].candidate.vary):
            out.append(_move(bucket[0], shown))
    return out


def grouped_blocked(found: list[Found]) -> list[tuple[dict[str, Any], tuple[str, ...], dict[str, Any]]]:
    out = []
    for bucket in _bucketed(found):
        for shown in _merged([f.candidate.shown for f in bucket], bucket[0].candidate.vary):
            out.append((_move(bucket[0], shown), bucket[0].needs, bucket[0].extra))
    return out


def _merged(shown: list[dict[str, Any]], vary: tuple[str, ...]) -> list[dict[str, list[Any]]]:
    """The candidates' arguments as few moves as say the same: one move allows every
    combination of its values (where not every combination is legal, split by the last)."""
    names = list(shown[0])
    values = {n: list(dict.fromkeys(s[n] for s in shown)) for n in names}
    combos = {tuple(s[n] for n in names) for s in shown}
    size = 1
    for n in names:
        size *= len(values[n])
    if size == len(combos) or not vary:
        return [values]
    last, rest = vary[-1], vary[:-1]
    out = []
    for value in values[last]:
        out += _merged([s for s in shown if s[last] == value], rest)
    return out


def _move(found: Found, values: dict[str, list[Any]]) -> dict[str, Any]:
    c = found.candidate
    args, allowed = [], {}
    for name, options in values.items():
        given = [v for v in options if v is not None]
        if given:
            allowed[name] = given
            if len(given) == len(options):  # never left out: required
                args.append(name)
    args += [name for name in FREE.get(c.command, ()) if name not in args]
    if c.reason is not None and "reason" not in args:
        args.append("reason")
    move: dict[str, Any] = {"command": next_gates.command_of(c.command), "args": args, "allowed": allowed,
                            "actor": c.actor}
    optional = [name for name in (*OPTIONAL.get(c.command, ()), *c.optional) if name not in args]
    if optional:
        move["optional"] = optional
    if found.leads_to:
        move["leads_to"] = found.leads_to
    if found.extra.get("missing_recommended"):  # a legal move into a stage whose recommended inputs are missing
        move["note"] = f"recommended for the stage it starts, missing: {', '.join(found.extra['missing_recommended'])}"
    return move


def without_leads(move: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in move.items() if k != "leads_to"}

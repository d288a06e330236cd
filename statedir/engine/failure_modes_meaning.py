"""The failure-mode checklist's names checked (statedir.engine.template.meaning): each one the
template uses is one it declares. Plain data in, problems with their JSON paths out."""
from __future__ import annotations

from typing import Any

# What an answer may do (statedir.engine.failure_modes reads the same words).
BACK, CLEAR, KEEP = "back", "clear", "keep"


def meaning(doc: dict[str, Any]) -> list[tuple[list[Any], str]]:
    """The checklist's names, each one the template declares (template_meaning's check)."""
    spec = doc.get("failure_modes")
    if not spec:
        return []
    out: list[tuple[list[Any], str]] = []
    at = ["failure_modes"]
    stages = [s["id"] for s in doc["stages"]]
    ids = [str(m["id"]) for m in spec["modes"]]
    for i, mid in enumerate(ids):
        if ids.index(mid) != i:
            out.append(([*at, "modes", i, "id"], f"duplicate mode id {mid!r}"))
    for i, sid in enumerate(spec["stages"]):
        if sid not in stages:
            out.append(([*at, "stages", i], f"unknown stage {sid!r}"))
        elif not any(s["id"] == sid and "integrity" in s for s in doc["stages"]):
            out.append(([*at, "stages", i], f"stage {sid} is no integrity stage: the checklist is an integrity gate's"))
    outcomes = spec["outcomes"]
    if spec["clear"] not in outcomes:
        out.append(([*at, "clear"], f"{spec['clear']!r} is not one of the outcomes ({', '.join(outcomes)})"))
    for key in ("block", "warn"):
        for i, rule in enumerate(spec.get(key, [])):
            if rule["outcome"] not in outcomes or rule["outcome"] == spec["clear"]:
                out.append(([*at, key, i, "outcome"], f"{rule['outcome']!r} is not one of the outcomes that find "
                                                      f"something ({', '.join(o for o in outcomes if o != spec['clear'])})"))
            for j, mid in enumerate(rule.get("modes", [])):
                if mid not in ids:
                    out.append(([*at, key, i, "modes", j], f"unknown mode {mid!r}"))
    effects = set(spec["answers"].values())
    if CLEAR not in effects or KEEP not in effects:
        out.append(([*at, "answers"], "the user's answers need one that overrides (clear) and one that revises (keep)"))
    if BACK in effects and spec.get("on_confirm") not in stages:
        out.append(([*at, "on_confirm"], f"an answer sends the run back (back): on_confirm must name a stage, "
                                         f"not {spec.get('on_confirm')!r}"))
    for i, rule in enumerate(spec.get("carry_over", [])):
        for key in ("from", "to"):
            if rule[key] not in spec["stages"]:
                out.append(([*at, "carry_over", i, key], f"{rule[key]!r} is not a stage carrying the checklist"))
        if rule["from"] in stages and rule["to"] in stages and stages.index(rule["from"]) >= stages.index(rule["to"]):
            out.append(([*at, "carry_over", i], "a carry-over goes from an earlier stage to a later one"))
        for j, outcome in enumerate(rule["outcomes"]):
            if outcome not in outcomes:
                out.append(([*at, "carry_over", i, "outcomes", j], f"{outcome!r} is not one of the outcomes"))
    return out

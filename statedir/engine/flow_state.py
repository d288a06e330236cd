"""What makes a state of a template's flow (statedir.engine.template.flow): a run's data
abstracted to what the rules read of it.

States are told apart by each stage's status, the current (and checkpoint) stage's fields that
conditions, caps and retries read, fields other stages' prerequisites read, the open
checkpoint, the pipeline state, counters conditions read (clamped at what they are compared
with), and the materials prerequisites name where no role may register them (where one may,
a material is registered whenever entering a stage asks for it, so which are held so far does
not change where a run can go). The continue counters only choose between FULL and SLIM
checkpoints, which take the same answers, so they do not make a state."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from statedir.engine import failure_modes, next_moves
from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.transition_data import RunData


@dataclasses.dataclass
class Reads:
    """What the rules read of a run, by the template: the abstraction of a run to a state."""

    fields: list[str]
    bounds: dict[str, int]
    referenced: dict[str, list[str]]
    counters: dict[str, int]
    materials: list[str]


def _conditions(t: Template) -> Iterator[dict[str, Any]]:
    def walk(condition: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield condition
        for inner in condition.get("any", []):
            yield from walk(inner)
    for stage in t.stages:
        for condition in stage.get("completion", []):
            yield from walk(condition)
    for edge in t.graph:
        for condition in edge.get("when", []):
            yield from walk(condition)


def reads(t: Template) -> Reads:
    fields: dict[str, int] = {}
    counters: dict[str, int] = {}
    for condition in _conditions(t):
        numbers = [v for k, v in condition.items() if k in ("equals", "at_least", "below") and isinstance(v, int)]
        bound = max(numbers, default=0) + 1
        if "counter" in condition:
            counters[condition["counter"]] = max(counters.get(condition["counter"], 0), bound)
        elif "field" in condition:
            fields[condition["field"]] = max(fields.get(condition["field"], 0), bound)
    referenced: dict[str, list[str]] = {}
    materials: set[str] = set()
    for stage in t.stages:
        for req in stage.get("prerequisites", {}).get("required", []):
            if isinstance(req, str):
                materials.add(req)
                continue
            materials.update(req.get("any_of", []))
            refs = req.get("stage_field") or []
            for ref in refs if isinstance(refs, list) else [refs]:
                referenced.setdefault(ref["stage"], []).append(ref["field"])
    if t.caps.get("re_revise_rounds") is not None and "loop_count" in counters:
        counters["loop_count"] = max(counters["loop_count"], t.caps["re_revise_rounds"] + 1)
    if next_moves.actor_for(t, "material") is not None:
        # Registered on demand whenever entering a stage asks (and never unregistered): which
        # are held so far does not change where a run can go.
        materials = set()
    return Reads(sorted(fields), fields, referenced, counters, sorted(materials))


def _clamp(value: Any, bound: int) -> Any:
    return min(value, bound) if isinstance(value, int) and not isinstance(value, bool) else value


def key(t: Template, run: RunData, reads: Reads) -> tuple[Any, ...]:
    state = run.state
    checkpoint = state.get("checkpoint")
    active = {state.get("current_stage"), checkpoint["stage"] if checkpoint else None}
    stages = []
    for stage_id in t.stage_ids:
        record = run.stages[stage_id]
        if stage_id in active or stage_id in reads.referenced:  # where a field is read, the derived ones too
            record = template_conditions.facts(record)
        item: list[Any] = [record["status"]]
        if stage_id in active:
            item += [_clamp(record.get(f), reads.bounds[f]) for f in reads.fields]
            cap = t.stage(stage_id).get("integrity", {}).get("retry_cap")
            if cap is not None:  # the rounds left (a resolution lifts the cap by one), and the decision
                cap += record.get("extra_rounds") or 0
                item += [cap - min(record.get("retry_count") or 0, cap), record.get("fail_loop_decision")]
        item += [record.get(f) for f in reads.referenced.get(stage_id, [])]
        if "failure_modes" in record:  # the checklist recorded, and the modes it blocks on still
            item += [record["failure_modes"] is not None, tuple(failure_modes.standing(record))]
        if stage_id in active and record.get("contract"):  # the re-review contract's parts recorded so far, and its check's outcome
            contract = record["contract"]
            item += [tuple(sorted(contract)), (contract.get("check") or {}).get("outcome")]
        stages.append(tuple(item))
    opened = None if not checkpoint else (checkpoint["stage"], checkpoint["type"], tuple(checkpoint["choices"]),
                                          checkpoint.get("default"), checkpoint.get("terminal"))
    counters = tuple(_clamp(state.get(name, 0), bound) for name, bound in sorted(reads.counters.items()))
    have = tuple(name for name in reads.materials if state.get("materials", {}).get(name))
    ladder = len(t.doc.get("override_ladder", []))  # past its last round, every round asks the same
    overrides = tuple(sorted((k, min(v, ladder)) for k, v in (state.get("override_rounds") or {}).items()))
    return (state["pipeline_state"], state.get("current_stage"), opened, tuple(stages), counters, have, overrides)

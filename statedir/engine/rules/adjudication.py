"""Pure decisions for `bind` and `seal` over plain run data, like statedir.engine.rules.

`bind` edits one row of `pending_adjudication_activity_bindings`; `seal` writes the hashed
rows as `adjudication_activity_sources` after the terminal state and changes nothing else.
"""
from __future__ import annotations

import copy
from typing import Any

from statedir.engine import adjudication_contract as contract
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunDraft, Request, RunData
from statedir.errors import IllegalTransition, InvalidValue
from statedir.hints import opt

PENDING, SOURCES = "pending_adjudication_activity_bindings", "adjudication_activity_sources"


def ars_stage(t: Template, raw: str) -> str:
    """A stage as ARS names it (`pipeline_stage_3_prime`), from a stage id, alias or ARS name."""
    names = {spec.get("ars_stage"): spec["id"] for spec in t.stages if spec.get("ars_stage")}
    if raw in names:
        return raw
    name = t.stage(raw).get("ars_stage")
    if not name:
        raise InvalidValue(f"stage {raw!r} has no ARS stage name in template {t.name}", stage=raw)
    return str(name)


def stage_of(t: Template, name: str) -> str | None:
    """The template's stage id for an ARS stage name."""
    return next((spec["id"] for spec in t.stages if spec.get("ars_stage") == name), None)


def _family(name: str) -> contract.Family:
    if name not in contract.BY_NAME:
        raise InvalidValue(f"unknown source family {name!r}; use one of {', '.join(contract.FAMILY_NAMES)}",
                           family=name, known=list(contract.FAMILY_NAMES))
    return contract.BY_NAME[name]


def _require_unsealed(state: dict[str, Any]) -> None:
    if SOURCES in state:
        raise IllegalTransition(f"run {state['run_id']} is sealed: its adjudication bindings no longer change",
                                run_id=state["run_id"])


def bind(t: Template, run: RunData, req: Request, now: str, _: str | None = None) -> Change:
    """Append one captured artifact to its family's row, or mark the row not applicable or
    unavailable (with its closed reason). Allowed after the terminal state, refused once sealed."""
    _require_unsealed(run.state)
    args = req.args
    family = _family(args["family"])
    draft = RunDraft(run)
    rows: list[dict[str, Any]] = draft.state.get(PENDING) or []
    if contract.rows_problems(rows, sealed=False):
        rows = draft.state[PENDING] = contract.initial_rows()  # a pre-contract run: start its rows afresh
    index = contract.FAMILY_NAMES.index(family.name)
    row = copy.deepcopy(rows[index])
    if args.get("unavailable") is not None:
        reason = args["unavailable"]
        if reason not in contract.UNAVAILABLE_REASONS:
            raise InvalidValue(f"unknown reason {reason!r}; use one of {', '.join(contract.UNAVAILABLE_REASONS)}",
                               reason=reason, known=list(contract.UNAVAILABLE_REASONS))
        row.update(capture_state=contract.UNAVAILABLE, reason_code=reason, artifacts=[])
        summary = f"bind {family.name}: unavailable ({reason})"
    elif args.get("not_applicable"):
        row.update(capture_state=contract.NOT_APPLICABLE, reason_code=contract.NOT_APPLICABLE_REASON, artifacts=[])
        summary = f"bind {family.name}: not applicable"
    else:
        artifact = _artifact(t, family, args)
        if row["capture_state"] != contract.CAPTURED:
            row.update(capture_state=contract.CAPTURED, reason_code=None, artifacts=[])
        if any(a["artifact_id"] == artifact["artifact_id"] for a in row["artifacts"]):
            raise IllegalTransition(f"artifact {artifact['artifact_id']} is already bound in {family.name}",
                                    artifact_id=artifact["artifact_id"])
        row["artifacts"].append(artifact)
        summary = f"bind {family.name}: {artifact['artifact_role']} {artifact['artifact_id']}"
    if row == rows[index]:
        raise IllegalTransition(f"{family.name} is already {row['capture_state']} ({row['reason_code']})")
    problems = contract.row_problems(row, family, sealed=False)
    if problems:
        raise InvalidValue(f"{family.name}: {problems[0]}", family=family.name, problems=problems)
    dropped = 0 if row["artifacts"] else len(rows[index]["artifacts"])
    rows[index] = row
    return draft.change(summary, now, family=family.name, capture_state=row["capture_state"],
                        artifacts=len(row["artifacts"]), dropped=dropped)


def _artifact(t: Template, family: contract.Family, args: dict[str, Any]) -> dict[str, Any]:
    missing = [f"--{k.replace('_', '-')}" for k in ("artifact", "role", "group", "path") if not args.get(k)]
    if missing:
        raise InvalidValue(f"binding an artifact needs {', '.join(missing)} (or {opt('not_applicable')} / {opt('unavailable')})")
    raw_stage = args.get("group_stage")
    if family.staged and not raw_stage:
        raise InvalidValue(f"{family.name} artifacts need {opt('group_stage')} (the review stage the group belongs to)")
    if not family.staged and raw_stage:
        raise InvalidValue(f"{family.name} artifacts take no {opt('group_stage')}")
    stage = ars_stage(t, raw_stage) if raw_stage else None
    if family.staged and stage not in contract.AUTHOR_STAGES:
        ids = [stage_of(t, name) for name in contract.AUTHOR_STAGES]
        allowed = [t.display(sid) if sid else name for sid, name in zip(ids, contract.AUTHOR_STAGES, strict=True)]
        raise InvalidValue(f"{family.name} groups belong to stage {' or '.join(allowed)}, not {raw_stage}")
    artifact = {"artifact_id": args["artifact"], "artifact_role": args["role"], "artifact_group_id": args["group"],
                "artifact_group_stage": stage, "relative_path": args["path"]}
    problems = contract.artifact_problems(family, artifact, sealed=False)
    if problems:
        raise InvalidValue(f"{family.name}: {problems[0]}", family=family.name, problems=problems)
    return artifact


def seal(t: Template, run: RunData, req: Request, now: str, _: str | None = None) -> Change | None:
    """Write the hashed rows (`req.args["sealed"]`) as adjudication_activity_sources; None when
    the run is sealed with exactly these rows already."""
    state = run.state
    if state["pipeline_state"] not in t.terminal_targets:
        raise IllegalTransition("seal comes only after the terminal state is committed "
                                f"(the pipeline is {state['pipeline_state']})", pipeline_state=state["pipeline_state"])
    rows = req.args["sealed"]
    problems = contract.rows_problems(rows, sealed=True) + _stage_problems(t, run, rows)
    if problems:
        raise InvalidValue(f"the bindings cannot be sealed: {problems[0]}", problems=problems)
    if SOURCES in state:
        if state[SOURCES] == rows:
            return None
        raise IllegalTransition("adjudication_activity_sources is already sealed with different rows; "
                                "a sealed inventory never changes", run_id=state["run_id"])
    draft = RunDraft(run)
    draft.state[SOURCES] = copy.deepcopy(rows)
    captured = sum(1 for r in rows if r["capture_state"] == contract.CAPTURED)
    hashed = sum(len(r["artifacts"]) for r in rows)
    return draft.change(f"seal adjudication_activity_sources ({captured} captured, {hashed} artifacts hashed)",
                        now, sources=copy.deepcopy(rows))


def _stage_problems(t: Template, run: RunData, rows: list[dict[str, Any]]) -> list[str]:
    """An author-adjudication group names a stage the terminal run completed (ARS replays this)."""
    out = []
    for row in rows:
        for artifact in row["artifacts"]:
            name = artifact["artifact_group_stage"]
            if name is None:
                continue
            stage_id = stage_of(t, name)
            if stage_id is None or run.stages[stage_id]["status"] != t.status["done"]:
                shown = t.display(stage_id) if stage_id else name
                out.append(f"{row['source_family']}: group {artifact['artifact_group_id']} belongs to stage "
                           f"{shown}, which the run did not complete")
                break
    return out

"""Declarative template conditions, prerequisites and the checkpoint policy, over plain data."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import Template


def facts(stage: dict[str, Any]) -> dict[str, Any]:
    """A stage record plus the values conditions may ask for that are derived, not stored."""
    found, fixed = stage.get("issues_found"), stage.get("issues_fixed")
    open_issues = None if found is None else found - (fixed or 0)
    return {**stage, "issues_open": open_issues}


def holds(condition: dict[str, Any], stage: dict[str, Any], state: dict[str, Any]) -> bool:
    """One condition of the small vocabulary: field in/equals, counter bounds, fail-loop, any."""
    if "any" in condition:
        return any(holds(c, stage, state) for c in condition["any"])
    if condition.get("fail_loop_decision"):
        return bool(stage.get("fail_loop_decision"))
    if "counter" in condition:
        value = state.get(condition["counter"], 0)
        if "below" in condition and not value < condition["below"]:
            return False
        return not ("at_least" in condition and value < condition["at_least"])
    value = facts(stage).get(condition["field"])
    if "in" in condition and value not in condition["in"]:
        return False
    if "equals" in condition and value != condition["equals"]:
        return False
    return not ("at_least" in condition and (value is None or value < condition["at_least"]))


def all_hold(conditions: list[dict[str, Any]], stage: dict[str, Any], state: dict[str, Any]) -> bool:
    return all(holds(c, stage, state) for c in conditions)


def describe(conditions: list[dict[str, Any]]) -> str:
    def one(c: dict[str, Any]) -> str:
        if "any" in c:
            return " or ".join(one(x) for x in c["any"])
        if c.get("fail_loop_decision"):
            return "a recorded FAIL-loop decision"
        if "counter" in c:
            return f"{c['counter']} below {c.get('below')}"
        if "in" in c:
            return f"{c['field']} in {', '.join(map(str, c['in']))}"
        if "equals" in c:
            return f"{c['field']} = {c['equals']}"
        return f"{c['field']} at least {c.get('at_least')}"
    return "; ".join(one(c) for c in conditions)


def prerequisites(t: Template, state: dict[str, Any], stages: dict[str, dict[str, Any]],
                  stage_id: str) -> dict[str, Any]:
    """check_prerequisites: what entering `stage_id` needs and what is missing."""
    have = state.get("materials", {})
    spec = t.stage(stage_id).get("prerequisites", {})
    missing_required = [label for label, _ in unmet_requirements(t, state, stages, stage_id)]
    missing_recommended = [name for name in recommended(t, stages, spec) if not have.get(name)]
    warning = None
    if missing_recommended:
        warning = (f"recommended material missing for stage {t.display(stage_id)}: "
                   f"{', '.join(missing_recommended)}; this may affect quality")
    return {"prerequisites_met": not missing_required, "missing_required": missing_required,
            "missing_recommended": missing_recommended, "warning": warning}


def recommended_name(item: str | dict[str, Any]) -> str:
    """A recommended material's name: the item itself, or its `material` (one recommended `after` a stage)."""
    return item if isinstance(item, str) else str(item["material"])


def recommended(t: Template, stages: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[str]:
    """The materials a stage recommends: each one given `after` a stage only where that stage completed."""
    return [recommended_name(item) for item in spec.get("recommended", [])
            if isinstance(item, str) or stages.get(item["after"], {}).get("status") == t.status["done"]]


def unmet_requirements(t: Template, state: dict[str, Any], stages: dict[str, dict[str, Any]],
                       stage_id: str) -> list[tuple[str, list[str]]]:
    """Each required prerequisite of `stage_id` not met: its label, and the materials any one of
    which would meet it (where a stage field is asked for too, that must hold as well)."""
    have = state.get("materials", {})
    out = []
    for req in t.stage(stage_id).get("prerequisites", {}).get("required", []):
        if isinstance(req, str):
            if not have.get(req):
                out.append((req, [req]))
            continue
        names = list(req.get("any_of", []))
        present = any(have.get(name) for name in names)
        field = req.get("stage_field")
        if field and present:  # one stage field, or a list of them any one of which holds
            present = any(facts(stages.get(f["stage"], {})).get(f["field"]) in f["in"]
                          for f in (field if isinstance(field, list) else [field]))
        if not present:
            out.append((req.get("label") or " or ".join(names), names))
    return out


def checkpoint_type(t: Template, state: dict[str, Any], stage_id: str) -> tuple[str, bool]:
    """The type of the checkpoint opened when `stage_id` completes, and the awareness prompt."""
    policy = t.checkpoints
    declared = t.stage(stage_id).get("checkpoint", "DEFAULT")
    count = state.get("consecutive_continue_count", 0)
    awareness = count >= policy.get("awareness_after", 2)
    if declared == "MANDATORY":
        return "MANDATORY", awareness
    if state.get("checkpoints_opened", 0) == 0 or declared == "FULL":
        return policy.get("first", "FULL"), awareness
    if count >= policy.get("force_full_after", 4):
        return "FULL", awareness
    return ("SLIM" if state.get("slim_checkpoints") else "FULL"), awareness

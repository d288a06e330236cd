"""What an action is in a sentence: a refusal reads "pipeline_orchestrator may not create runs",
never "may not new", and names the roles that may act."""
from __future__ import annotations

# action -> what taking it is, after "may not" (an action not named here: "take <action>")
DOING = {
    "new": "create runs", "stage": "update stages", "output": "record stage outputs",
    "pipeline": "change the pipeline state", "set": "set run fields", "material": "register materials",
    "integrity": "record integrity verdicts", "revision": "record revision progress", "loop": "start revision loops",
    "observe": "append observer reports", "confirm": "answer checkpoints", "redo": "reopen stages",
    "resume": "resume at reset boundaries", "bind": "bind adjudication artifacts", "seal": "seal adjudication runs",
    "rollback": "roll runs back", "resolve": "resolve FAIL loops", "acknowledge_mode": "acknowledge failure modes",
    "checklist": "submit failure-mode checklists", "contract": "record the re-review contract",
    "advisory": "record Stage 5 entry advisories", "compliance": "submit compliance reports",
    "compliance_override": "acknowledge blocking compliance reports",
}


def doing(action: str) -> str:
    return DOING.get(action, f"take the action {action}")


def either(roles: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`: the roles a refusal names."""
    if len(roles) < 2:
        return "".join(roles)
    return f"{', '.join(roles[:-1])} or {roles[-1]}"

"""The re-review contract's files bound to the run's traceability adjudication row by statedir
itself (`re_review_contract.binds`): each part's file in the role the template gives it
(`artifact_roles`) and, where the template names one (`traceability`: academic-pipeline 3.23), the
traceability file, a material of its own registered with its file. Bound once every role of the
row has its file (best effort: a binding the row would refuse is left out). Pure: no stage, part
or material is named here."""
from __future__ import annotations

from typing import Any

from statedir.engine import adjudication_contract as contract_mod
from statedir.engine.template import Template
from statedir.engine.transition_data import RunDraft

CHECK = "check"
GROUP = "SOURCE-GROUP-re-review-contract"


def declared(t: Template) -> dict[str, Any] | None:
    spec = t.doc.get("re_review_contract")
    return spec.get("traceability") if spec else None


def registers(t: Template, names: list[str]) -> bool:
    """Whether registering `names` registers the template's traceability file."""
    spec = declared(t)
    return bool(spec) and spec["material"] in names  # type: ignore[index]


def _file_of(t: Template, draft: RunDraft, material: str) -> str | None:
    """The path of the current version of `material`, where it was registered with one file."""
    label = (draft.state.get("current_version") or {}).get(t.series_of(material)["name"])
    passport = {**draft.run.passports, **draft.passports}.get(label or "") or {}
    files = passport.get("files") or []
    return str(files[0]["path"]) if len(files) == 1 and files[0].get("path") else None


def bind(t: Template, draft: RunDraft) -> None:
    """The row bound to the contract's files (and the traceability file) where each role has one."""
    spec = t.doc.get("re_review_contract") or {}
    family, roles = spec.get("binds"), spec.get("artifact_roles") or {}
    rows = draft.state.get("pending_adjudication_activity_bindings")
    if not family or not isinstance(rows, list):
        return
    contract = draft.view(spec["stage"]).get("contract") or {}
    artifacts = [{"artifact_id": f"re_review_{part}", "artifact_role": roles[part], "artifact_group_id": GROUP,
                  "artifact_group_stage": None, "relative_path": contract[part]["path"]}
                 for part in [*spec["parts"], CHECK] if part in roles and part in contract]
    extra = declared(t)
    if extra:
        path = _file_of(t, draft, extra["material"])
        if path is None:
            return
        artifacts.append({"artifact_id": f"re_review_{extra['material']}", "artifact_role": extra["role"],
                          "artifact_group_id": GROUP, "artifact_group_stage": None, "relative_path": path})
    needed = contract_mod.BY_NAME[family]
    if extra and {a["artifact_role"] for a in artifacts} != set(needed.roles) - set(needed.optional):
        return  # a role without its file yet: bound when the last one is recorded
    for row in rows:
        if row.get("source_family") == family:
            bound = {**row, "capture_state": contract_mod.CAPTURED, "reason_code": None, "artifacts": artifacts}
            if not contract_mod.row_problems(bound, needed, sealed=False):
                row.update(bound)

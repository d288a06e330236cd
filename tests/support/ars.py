"""A real academic-pipeline run driven to its terminal state through the Python API (from stage 3',
where runs.at_re_review leaves it, with RE_REVIEW's figures), and the
upstream ARS tool's rules for a sealed inventory, re-stated as independent checks."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from statedir import api
from tests.support.util import CLEAR_ITEMS, contract_holds

INTEGRITY = "integrity_verification"
FAMILIES = ["revision_author_adjudication", "compliance_report", "re_review_traceability",
            "explicit_user_request", "mandatory_checkpoint_response"]
ROLES = {
    "revision_author_adjudication": ["author_adjudication_input", "author_adjudication"],
    "compliance_report": ["compliance_report", "compliance_override_action_receipt"],
    "re_review_traceability": ["input_manifest", "precommitment", "verdict_record", "traceability"],
    "explicit_user_request": ["explicit_user_request_log"],
    "mandatory_checkpoint_response": ["mandatory_checkpoint_response_log"],
}
# The run's figures up to stage 3' (runs.at_re_review's arguments)
RE_REVIEW: dict[str, Any] = {"topic": "AI and quality assurance", "refs": 10, "issues": 0, "items": 2}
UNAVAILABLE = {"source_not_provided", "source_unreadable", "source_invalid", "capture_not_supported"}
TO_ARS = {"1": "pipeline_stage_1", "2": "pipeline_stage_2", "2.5": "pipeline_stage_2_5", "3": "pipeline_stage_3",
          "3p": "pipeline_stage_3_prime", "4": "pipeline_stage_4", "4p": "pipeline_stage_4_prime",
          "4.5": "pipeline_stage_4_5", "5": "pipeline_stage_5", "6": "pipeline_stage_6"}


def finish(sd: api.StateDir, run: str) -> None:
    """From stage 3' in progress to the pipeline completed (stage 6 acknowledged)."""
    sd.material(run, ["re_review_report"])
    contract_holds(sd, run)
    sd.stage(run, "3p", "completed", decision="accept")
    sd.confirm(run, response="continue")
    sd.integrity(run, "4.5", "PASS", refs_total=10, refs_verified=10, issues_found=0, issues_fixed=0, actor=INTEGRITY)
    sd.checklist(run, "4.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage(run, "4.5", "completed")
    sd.confirm(run, response="continue", format="apa7")
    sd.material(run, ["final_paper"])
    sd.stage(run, "5", "completed")
    sd.confirm(run, response="continue")
    sd.confirm(run, response="done")


def check_sealed(state: dict[str, Any], root: Path) -> None:
    """The upstream tool's rules for a sealed terminal state, checked independently of statedir:
    terminal replay, family order, closed shapes, group and role order, the hash of each artifact."""
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}", state["run_id"])
    assert state["pipeline_state"] in ("completed", "aborted")
    current = state["current_stage"]
    assert current in TO_ARS and state["stages"][current]["status"] in (
        "pending", "in_progress", "completed", "skipped", "blocked")
    if state["pipeline_state"] == "completed":
        assert current == "6" and state["stages"]["6"]["status"] in ("completed", "skipped")
    rows = state["adjudication_activity_sources"]
    assert [r["source_family"] for r in rows] == FAMILIES
    for row in rows:
        assert set(row) == {"source_family", "capture_state", "reason_code", "artifacts"}
        family, kind = row["source_family"], row["capture_state"]
        reason, artifacts = row["reason_code"], row["artifacts"]
        if kind == "captured":
            assert reason is None and artifacts
        elif kind == "not_applicable":
            assert reason == "not_applicable_for_run" and artifacts == []
        else:
            assert kind == "unavailable" and reason in UNAVAILABLE and artifacts == []
        groups: list[list[dict[str, Any]]] = []
        for artifact in artifacts:
            assert set(artifact) == {"artifact_id", "artifact_role", "artifact_group_id", "artifact_group_stage",
                                     "relative_path", "sha256"}
            assert re.fullmatch(r"SOURCE-GROUP-[A-Za-z0-9][A-Za-z0-9._-]{0,95}", artifact["artifact_group_id"])
            assert artifact["sha256"] == hashlib.sha256((root / artifact["relative_path"]).read_bytes()).hexdigest()
            if groups and groups[-1][0]["artifact_group_id"] == artifact["artifact_group_id"]:
                groups[-1].append(artifact)
            else:
                assert all(g[0]["artifact_group_id"] != artifact["artifact_group_id"] for g in groups)
                groups.append([artifact])
        if kind != "captured":
            continue
        for group in groups:
            roles = [a["artifact_role"] for a in group]
            if family == "compliance_report":
                assert roles in (ROLES[family][:1], ROLES[family])
            else:
                assert roles == ROLES[family]
            stages = {a["artifact_group_stage"] for a in group}
            assert len(stages) == 1
            if family == "revision_author_adjudication":
                (stage,) = stages
                raw = {v: k for k, v in TO_ARS.items()}[stage]
                assert stage in ("pipeline_stage_3", "pipeline_stage_3_prime")
                assert state["stages"][raw]["status"] == "completed"
            else:
                assert stages == {None}
        if family == "revision_author_adjudication":
            order = [g[0]["artifact_group_stage"] for g in groups]
            assert 1 <= len(groups) <= 2 and order == sorted(order) and len(set(order)) == len(order)
        elif family == "compliance_report":
            assert 1 <= len(groups) <= 16
        else:
            assert len(groups) == 1

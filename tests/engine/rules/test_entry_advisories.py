"""The Stage 5 entry advisories bound to the accepted draft, the claim_audit setting's gate on
4.5 -> 5, and compliance reports (PRISMA-trAIce + RAISE) (issue 33, points 2, 3 and 4 in part).
Through the API store (its refusals in the CLI's words): the CLI's own contract is tests/cli's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir import api
from tests.support.refusals import api_refused
from tests.support.runs import at_2_5, report, through_4_5, write_file
from tests.support.util import clear_checklist, cli_refused, copy_of

COMPLIANCE = "compliance_agent"


@pytest.fixture
def at5(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    return copy_of("entry-gates-at-5", through_4_5, repo, tmp_path_factory)[0]


def test_advisories_in_order_bound_to_the_same_draft(at5: api.StateDir, repo: Path) -> None:
    def refused(code: str, kind: str, **args: str) -> dict[str, str]:
        return api_refused(repo, code, lambda: at5.advisory("r", kind, **args))

    error = refused("ILLEGAL_TRANSITION", "cross_document", file="cd.json")
    assert "comes after tortured_phrase" in error["message"]
    refused("INVALID_VALUE", "plagiarism", file="tp.json")  # unknown kind
    refused("INVALID_VALUE", "tortured_phrase", file="../outside.json")
    refused("INVALID_VALUE", "tortured_phrase", file="missing.json")
    refused("INVALID_VALUE", "tortured_phrase")  # neither a file nor unavailable
    refused("INVALID_VALUE", "tortured_phrase", file="tp.json", unavailable="X")
    refused("INVALID_VALUE", "tortured_phrase", unavailable="not a code")
    at5.advisory("r", "tortured_phrase", file="tp.json")
    refused("ILLEGAL_TRANSITION", "tortured_phrase", file="tp.json")  # once per draft
    out = at5.advisory("r", "cross_document", unavailable="RUNTIME_FAILED")
    assert out["version_label"] == "paper_draft_v1", out
    shown = at5.next("r")
    assert [(a["kind"], a["binding"]) for a in shown["advisories"]] == [("tortured_phrase", "CURRENT"),
                                                                        ("cross_document", "CURRENT")]
    stage = at5.show("r")["stages"]["4.5"]  # nothing but the advisories: the verdict stands
    assert stage["verdict"] == "PASS"
    assert at5.show("r")["entry_advisories"]["cross_document"]["code"] == "ADVISORY_UNAVAILABLE:RUNTIME_FAILED"
    assert at5.status("r")["advisories"][0] == "tortured_phrase: recorded for paper_draft_v1 [CURRENT]"
    assert "Stage 5 entry advisories:" in at5.status("r")["dashboard"]
    assert at5.confirm("r", response="continue", format="apa7")["next"] == "5"  # they never gate


def test_a_new_draft_makes_both_stale_until_it_passes_integrity_again(at5: api.StateDir, repo: Path) -> None:
    at5.advisory("r", "tortured_phrase", file=str(repo / "tp.json"))
    at5.advisory("r", "cross_document", file=str(repo / "cd.json"))
    at5.redo("r", "4.5", reason="the final check again, on a corrected draft")
    draft = write_file(at5, "draft2.md", "# Draft 2\n## Abstract\n## References\n")
    at5.material("r", ["revised_draft"], files=[draft])
    assert {a["binding"] for a in at5.next("r")["advisories"]} == {"STALE"}
    ars = at5.show("r", format="ars")
    assert {a["binding"] for a in ars["stage5_advisories"]} == {"STALE"}
    assert "[STALE]" in at5.status("r")["dashboard"]
    error = api_refused(repo, "ILLEGAL_TRANSITION", lambda: at5.advisory("r", "tortured_phrase", file="tp.json"))
    assert "passes integrity again" in error["message"]
    at5.integrity("r", "4.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    error = api_refused(repo, "ILLEGAL_TRANSITION", lambda: at5.advisory("r", "cross_document", file="cd.json"))
    assert "names paper_draft_v1" in error["message"]  # a second advisory for another draft
    at5.advisory("r", "tortured_phrase", file=str(repo / "tp.json"))
    at5.advisory("r", "cross_document", file=str(repo / "cd.json"))
    assert {(a["version_label"], a["binding"]) for a in at5.next("r")["advisories"]} == {("paper_draft_v2", "CURRENT")}
    assert at5.verify()["clean"]


def test_after_a_new_draft_the_refusal_names_the_verdict_of_the_current_one(at5: api.StateDir, repo: Path) -> None:
    draft = write_file(at5, "draft2.md", "# Draft 2\n## Abstract\n## References\n")
    at5.material("r", ["revised_draft"], files=[draft])  # registered at the open checkpoint, not yet checked
    message = cli_refused(repo, "ILLEGAL_TRANSITION", "advisory", "r", "tortured_phrase", "--file", "tp.json")["message"]
    assert "verdict PASS" not in message  # the PASS was on the draft before: none stands for this one yet
    assert "paper_draft_v2, UNVERIFIED, has no stage 4.5 verdict yet: the last, PASS, was on paper_draft_v1" in message


def test_the_unknown_advisory_refusal_lists_the_kinds_the_run_accepts(at5: api.StateDir, repo: Path) -> None:
    error = cli_refused(repo, "INVALID_VALUE", "advisory", "r", "plagiarism", "--file", "tp.json")
    assert error["details"]["allowed"] == ["tortured_phrase", "cross_document"]  # no claim_audit setting
    assert "claim_audit" not in error["message"]
    at5.new("r2", topic="t", settings=["claim_audit=true"])
    error = cli_refused(repo, "INVALID_VALUE", "advisory", "r2", "plagiarism", "--file", "tp.json")
    assert error["details"]["allowed"] == ["tortured_phrase", "cross_document", "claim_audit"]
    assert "use one of tortured_phrase, cross_document, claim_audit" in error["message"]


def test_claim_audit_gates_4_5_to_5_where_the_setting_is_on(repo: Path,
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("entry-gates-claim-audit", lambda s: through_4_5(s, settings=["claim_audit=true"]), repo,
                 tmp_path_factory)[0]
    (repo / "audit-high.json").write_text(json.dumps({"classes": {"claim_drifts": "HIGH-WARN",
                                                                  "uncited_assertions": "LOW-WARN"}}))
    (repo / "audit-ok.json").write_text(json.dumps({"classes": {"claim_drifts": "LOW-WARN"}}))
    (repo / "audit-none.json").write_text("{}\n")
    error = api_refused(repo, "PREREQUISITES_MISSING", lambda: sd.confirm("r", response="continue"))
    assert "claim_audit result" in error["message"]
    blocked = [b for b in sd.next("r")["blocked"] if b["move"]["command"] == "confirm"]
    assert blocked and "claim_audit" in blocked[0]["needs"][0]
    api_refused(repo, "INVALID_VALUE", lambda: sd.advisory("r", "claim_audit", file="audit-none.json"))  # no class
    api_refused(repo, "INVALID_VALUE", lambda: sd.advisory("r", "claim_audit", unavailable="NO_AUDIT"))
    out = sd.advisory("r", "claim_audit", file="audit-high.json")
    assert out["refused_classes"] == ["claim_drifts"], out
    assert "HIGH-WARN" in api_refused(repo, "PREREQUISITES_MISSING",
                                      lambda: sd.confirm("r", response="continue"))["message"]
    sd.redo("r", "4.5", reason="the claim drift fixed in a new draft")
    sd.material("r", ["revised_draft"], files=[write_file(sd, "draft2.md", "# Draft 2\n## Abstract\n## References\n")])
    sd.integrity("r", "4.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    clear_checklist(sd, "r", "4.5")
    sd.advisory("r", "claim_audit", file=str(repo / "audit-ok.json"))
    sd.stage("r", "4.5", "completed")
    assert sd.confirm("r", response="continue", format="apa7")["next"] == "5"


def test_claim_audit_needs_the_setting(at5: api.StateDir, repo: Path) -> None:
    (repo / "audit.json").write_text(json.dumps({"classes": {"claim_drifts": "LOW-WARN"}}))
    assert "setting claim_audit" in api_refused(repo, "INVALID_VALUE",
                                                lambda: at5.advisory("r", "claim_audit", file="audit.json"))["message"]


def test_compliance_outside_systematic_review_is_capped_at_warn(repo: Path,
                                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("compliance-standard", at_2_5, repo, tmp_path_factory)[0]
    api_refused(repo, "PERMISSION_DENIED", lambda: sd.compliance("r", "2.5", report="block.json"))  # the orchestrator
    error = api_refused(repo, "INVALID_VALUE", lambda: sd.compliance("r", "2.5", report="bad.json", actor=COMPLIANCE))
    assert "compliance-report.schema.json" in error["message"]
    api_refused(repo, "INVALID_VALUE", lambda: sd.compliance("r", "3", report="block.json", actor=COMPLIANCE))
    api_refused(repo, "INVALID_VALUE", lambda: sd.compliance("r", "2.5", report="../x.json", actor=COMPLIANCE))
    out = sd.compliance("r", "2.5", report="block.json", actor=COMPLIANCE)
    assert out["decision"] == "warn" and out["capped_from"] == "block", out
    passport = sd.show("r")["passports"]["paper_draft_v1"]
    assert passport["compliance_history"][0]["decision"] == "warn"
    row = next(r for r in sd.show("r")["pending_adjudication_activity_bindings"]
               if r["source_family"] == "compliance_report")
    assert row["capture_state"] == "captured" and row["artifacts"][0]["relative_path"] == "block.json"
    sd.stage("r", "2.5", "completed")  # a warn never blocks


def test_a_block_needs_the_users_acknowledgement_under_the_ladder(repo: Path,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("compliance-systematic", lambda s: at_2_5(s, mode="systematic-review"), repo, tmp_path_factory)[0]
    api_refused(repo, "ILLEGAL_TRANSITION", lambda: sd.compliance("r", "2.5", override=True, actor="user"))  # none
    for _ in range(3):
        out = sd.compliance("r", "2.5", report="block.json", actor=COMPLIANCE)
        assert out["decision"] == "block", out
    history = sd.show("r")["passports"]["paper_draft_v1"]["compliance_history"]
    assert [e["round"] for e in history] == [1, 2, 3] and "resolution_path" not in history[1]
    assert history[2]["resolution_path"] == "user_override"
    error = api_refused(repo, "ILLEGAL_TRANSITION", lambda: sd.stage("r", "2.5", "completed"))
    assert "acknowledgement of the blocking compliance report" in error["message"]
    assert any(m["command"] == "compliance" and "override" in m["args"] for m in sd.next("r")["moves"])
    api_refused(repo, "PERMISSION_DENIED", lambda: sd.compliance("r", "2.5", override=True, actor=COMPLIANCE))
    sd.compliance("r", "2.5", override=True, actor="user")  # round 1: no reason
    sd.stage("r", "2.5", "completed")
    entry = sd.show("r")["passports"]["paper_draft_v1"]["compliance_history"][2]
    assert entry["user_override"]["override_round"] == 1 and entry["user_override"]["answered_by"] == "user"
    assert sd.verify()["clean"]  # every report and the acknowledgement replay as recorded


def test_the_compliance_report_schema_is_valid_and_every_property_merges() -> None:
    from statedir.files import schema

    doc = schema.load_schema("compliance-report")
    assert doc["required"] == ["mode", "frameworks", "overall_decision", "tier"]
    assert not schema.validate("compliance-report", json.loads(report()))


def test_compliance_comes_while_the_stage_is_at_work(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("compliance-standard", at_2_5, repo, tmp_path_factory)[0]
    sd.stage("r", "2.5", "completed")  # its checkpoint open: a report now could hold nothing back
    assert "current and in_progress" in api_refused(
        repo, "ILLEGAL_TRANSITION", lambda: sd.compliance("r", "2.5", report="warn.json", actor=COMPLIANCE))["message"]
    api_refused(repo, "INVALID_VALUE", lambda: sd.compliance("r", "2.5", actor=COMPLIANCE))  # no report, no override
    api_refused(repo, "INVALID_VALUE",
                lambda: sd.compliance("r", "2.5", report="warn.json", reason="x", actor=COMPLIANCE))

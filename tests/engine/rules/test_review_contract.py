"""Stage 3' under the three-gate re-review contract (issue 33, point 1): a hash-bound manifest, the
phase artifacts in order, a synthesis check; a decision only after a passing check. Through the API
store (its refusals in the CLI's words): the CLI's own contract is tests/cli's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.files import schema
from tests.support.refusals import api_refused
from tests.support.runs import PARTS, at_re_review, parts
from tests.support.sim import Sim
from tests.support.util import call, cli, cli_refused


def test_no_decision_before_the_passing_check(at3p: api.StateDir, repo: Path) -> None:
    api_refused(repo, "CONTRACT_INCOMPLETE", lambda: at3p.stage("r1", "3p", "completed", decision="accept"))
    api_refused(repo, "INVALID_VALUE", lambda: at3p.stage("r1", "3p", "completed", decision="reject"))  # never reject
    parts(at3p, 2)
    api_refused(repo, "CONTRACT_INCOMPLETE", lambda: at3p.stage("r1", "3p", "in_progress", decision="accept"))
    parts_left = [m for m in at3p.next("r1")["moves"] if m["command"] == "contract"]
    assert parts_left and parts_left[0]["allowed"]["part"] == ["evidence"], parts_left


def test_a_step_names_the_stage_by_its_id_the_message_by_its_name(at3p: api.StateDir, repo: Path) -> None:
    """The step a refusal names is typed as `next` lists it (3p, which a shell takes as it is); its
    prose names the stage as the dashboard does (3')."""
    error = cli_refused(repo, "CONTRACT_INCOMPLETE", "stage", "r1", "3'", "completed", "--decision", "accept")
    assert "stage 3''s decision" in error["message"] and "(`statedir contract RUN 3p ...`)" in error["message"], error
    error = cli_refused(repo, "ILLEGAL_TRANSITION", "stage", "r1", "4p", "in_progress")
    assert "stage 4' is not the current stage (3')" in error["message"], error
    assert "`statedir stage r1 3p completed`" in error["message"], error
    assert any(m["command"] == "contract" and m["allowed"]["stage"] == ["3p"] for m in at3p.next("r1")["moves"])
    assert "(3')" in cli_refused(repo, "ILLEGAL_TRANSITION", "revision", "r1", "--items-total", "1",
                                 "--items-addressed", "1")["message"]
    parts(at3p)
    assert cli("contract", "r1", "3p", "check", "--exit-code", "0", "--file", "report.json", cwd=repo).returncode == 0
    done = cli("stage", "r1", "3p", "completed", "--decision", "accept", cwd=repo).stdout
    assert "stage 3' completed" in done and "checkpoint open (MANDATORY, after stage 3'): statedir confirm r1" in done
    assert at3p.get("r1", "checkpoint")["stage"] == "3p"  # the id, as stored


def test_the_parts_come_in_order_and_unchanged(at3p: api.StateDir, repo: Path) -> None:
    def refused(code: str, part: str, file: str, exit_code: int | None = None) -> dict[str, str]:
        return api_refused(repo, code, lambda: at3p.contract("r1", "3p", part, file=file, exit_code=exit_code))

    error = refused("ILLEGAL_TRANSITION", "criteria", "criteria.md")
    assert "next is manifest" in str(error["message"])
    refused("ILLEGAL_TRANSITION", "check", "report.json", 0)
    refused("INVALID_VALUE", "verdict", "claims.md")
    refused("INVALID_VALUE", "manifest", "../outside.md")
    refused("INVALID_VALUE", "manifest", "missing.md")
    parts(at3p, 1)
    refused("ILLEGAL_TRANSITION", "manifest", "manifest.md")  # once
    for part in PARTS[1:]:
        at3p.contract("r1", "3p", part, file=f"{part}.md")
    criteria = at3p.get("r1", "stages.3p.contract.criteria")
    assert criteria["manifest_sha256"] == at3p.get("r1", "stages.3p.contract.manifest.sha256")
    refused("INVALID_VALUE", "check", "report.json", 7)
    error = refused("INVALID_VALUE", "check", "report.json")
    assert "needs its exit code: --exit-code N, one of 0, 1, 2" in str(error["message"])  # not "None is not one"; api_refused words it as the CLI does
    code, out, _ = call(["contract", "r1", "3p", "check", "--file", "report.json", "--json"])  # the CLI's words
    assert code == 2 and "needs its exit code: --exit-code N, one of 0, 1, 2" in out, out
    (repo / "evidence.md").write_text("rewritten after it was recorded\n")
    refused("CONTENT_CHANGED", "check", "report.json", 0)
    (repo / "evidence.md").write_text("evidence of the re-review\n")
    (repo / "other.json").write_text(json.dumps({"manifest_sha256": "ab" * 32}))
    error = refused("ILLEGAL_TRANSITION", "check", "other.json", 0)
    assert "another manifest" in str(error["message"])


def test_a_passing_check_lets_the_decision_be_set_and_binds_traceability(at3p: api.StateDir, repo: Path) -> None:
    parts(at3p)
    out = at3p.contract("r1", "3p", "check", file="report.json", exit_code=0)
    assert out["outcome"] == "pass", out
    at3p.stage("r1", "3p", "completed", decision="accept")
    # the open checkpoint's stage by a name 4' does not share (3.22 said RE-REV, and RE-REV' for 4')
    assert at3p.status("r1")["line"].endswith("checkpoint open: MANDATORY after RE-REVIEW (3')")
    # 3.23: the row's traceability artifact is the traceability file, bound once it is registered
    # (tests/engine/test_traceability.py); 3.22 bound the check's report in its place
    (repo / "trace.json").write_text("{}\n")
    at3p.material("r1", ["re_review_traceability"], files=["trace.json"])
    row = at3p.get("r1", "pending_adjudication_activity_bindings")[2]
    assert row["source_family"] == "re_review_traceability" and row["capture_state"] == "captured"
    assert [a["artifact_role"] for a in row["artifacts"]] == ["input_manifest", "precommitment", "verdict_record",
                                                              "traceability"]
    assert [a["relative_path"] for a in row["artifacts"]] == ["manifest.md", "criteria.md", "claims.md", "trace.json"]
    assert at3p.verify()["clean"]


def test_a_failing_check_hands_the_decision_to_the_user(at3p: api.StateDir, repo: Path) -> None:
    parts(at3p)
    out = at3p.contract("r1", "3p", "check", file="report.json", exit_code=1)
    assert out["then"] == "user_review_required", out
    assert at3p.get("r1", "stages.3p.decision") == "user_review_required"
    error = api_refused(repo, "CONTRACT_INCOMPLETE", lambda: at3p.stage("r1", "3p", "completed", decision="accept"))
    assert "statedir stage RUN 3p completed --decision user_review_required" in error["message"], error
    # the failed check stands (3.24): a passing one after it cannot take the decision back from the user
    for code_ in (0, 1):
        error = api_refused(repo, "ILLEGAL_TRANSITION",
                            lambda c=code_: at3p.contract("r1", "3p", "check", file="report.json", exit_code=c))
        assert "failed (synthesis_mismatch, exit 1) and stands" in error["message"], error
    at3p.stage("r1", "3p", "completed")
    assert sorted(at3p.get("r1", "checkpoint")["choices"]) == ["4.5", "4p"]
    at3p.material("r1", ["re_review_report"])
    # the user's answer picks the decision (3.23), never a route: tests/engine/test_checkpoint_decisions_re_review.py
    at3p.confirm("r1", decision="major_revision", response="continue", actor="user")
    assert at3p.get("r1", "current_stage") == "4p"
    assert at3p.verify()["clean"]


def test_a_manifest_invalid_check_aborts_fail_closed(at3p: api.StateDir, repo: Path) -> None:
    parts(at3p)
    at3p.contract("r1", "3p", "check", file="report.json", exit_code=2)
    assert at3p.get("r1", "pipeline_state") == "aborted"
    assert "manifest_invalid" in at3p.get("r1", "stages.3p.reason")
    assert at3p.verify()["clean"]


def test_a_legacy_run_skips_the_contract_and_is_marked(sd: api.StateDir, repo: Path) -> None:
    at_re_review(sd, "l1", settings=["re_review_legacy=true"])
    (repo / "manifest.md").write_text("m\n")
    api_refused(repo, "ILLEGAL_TRANSITION", lambda: sd.contract("l1", "3p", "manifest", file="manifest.md"))
    sd.stage("l1", "3p", "completed", decision="accept")
    assert "[LEGACY-NO-CONTRACT]" in sd.status("l1")["dashboard"]
    assert sd.show("l1", format="ars")["marks"] == ["[LEGACY-NO-CONTRACT]"]
    assert sd.verify()["clean"]


def test_a_run_made_on_3_23_may_record_its_check_again() -> None:
    """3.23 took a second check after a failed one (the latest stood); its runs keep that rule."""
    for name, again in ((str(schema.data_dir("templates") / "academic-pipeline@3.23.yaml"), True),
                        ("academic-pipeline", False)):
        sim = Sim(name)
        sim.to_re_review()
        sim.contract_holds(exit_code=1)
        assert sim.run.stages["3p"]["decision"] == "user_review_required"
        check = {"exit_code": 0, "file": {"path": "check.json", "content_hash": "f" * 64},
                 "current": {part: f"{n + 1:064x}" for n, part in enumerate(sim.t.doc["re_review_contract"]["parts"])}}
        if again:
            sim.do("contract", stage="3p", part="check", **check)
            assert sim.run.stages["3p"]["contract"]["check"]["outcome"] == "pass"
        else:
            with pytest.raises(StatedirError) as exc:
                sim.do("contract", stage="3p", part="check", **check)
            assert exc.value.code == "ILLEGAL_TRANSITION"

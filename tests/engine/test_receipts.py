"""The adjudication receipts statedir writes itself: every MANDATORY checkpoint's answer and the
user's explicit requests, appended at the answer and bound to their rows; a refused skip."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.store import run_logs
from tests.support.util import CLEAR_ITEMS, cli_json, past_stage_one, snapshot, stage_one_done

RUN = "run-r"
INTEGRITY = "integrity_verification"


def at_mandatory(sd: api.StateDir) -> None:
    """Stage 2.5 completed: its MANDATORY checkpoint open."""
    past_stage_one(sd, RUN, "receipts")
    sd.material(RUN, ["paper_draft"])
    sd.stage(RUN, "2", "completed")
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "2.5", "PASS", refs_total=3, refs_verified=3, issues_found=0, issues_fixed=0, actor=INTEGRITY)
    sd.checklist(RUN, "2.5", CLEAR_ITEMS, actor=INTEGRITY)
    sd.stage(RUN, "2.5", "completed")


def receipts(sd: api.StateDir, family: str) -> list[dict[str, Any]]:
    return run_logs.read(sd.store, sd.store.run_dir(RUN), family)


def row(sd: api.StateDir, family: str) -> dict[str, Any]:
    rows = sd.get(RUN, "pending_adjudication_activity_bindings")
    return next(r for r in rows if r["source_family"] == family)


def test_a_mandatory_answer_writes_its_receipt_and_binds_the_log(sd: api.StateDir, repo: Path) -> None:
    at_mandatory(sd)
    assert receipts(sd, "mandatory_checkpoint_response") == []  # the FULL checkpoint of stage 1 wrote none
    result = sd.confirm(RUN, response="continue", actor="user")
    (entry,) = receipts(sd, "mandatory_checkpoint_response")
    assert entry["stage"] == "2.5" and entry["receipt_stage"] == "pipeline_stage_2_5"
    assert entry["checkpoint_type"] == "MANDATORY" and entry["outcome"] == "answered"
    assert entry["response"] == "continue" and entry["answered_by"] == "user"
    bound = row(sd, "mandatory_checkpoint_response")
    assert bound["capture_state"] == "captured" and bound["reason_code"] is None
    (artifact,) = bound["artifacts"]
    assert artifact["artifact_role"] == "mandatory_checkpoint_response_log"
    assert (repo / artifact["relative_path"]).is_file()  # relative to the work tree seal's root is
    assert artifact["relative_path"].startswith("state/runs/run-r/history/mandatory_checkpoint_response/")
    assert row(sd, "explicit_user_request")["capture_state"] == "not_applicable"
    code, out = cli_json("verify", cwd=repo)  # the receipts replay as the answer wrote them
    assert code == 0, out
    assert result["commit"]


def test_later_answers_go_into_the_same_file(sd: api.StateDir, repo: Path) -> None:
    at_mandatory(sd)
    sd.confirm(RUN, response="review", actor="user")  # an explicit request too
    path = row(sd, "mandatory_checkpoint_response")["artifacts"][0]["relative_path"]
    sd.material(RUN, ["review_reports"])
    sd.material(RUN, ["revision_roadmap"])
    sd.stage(RUN, "3", "completed", decision="major_revision")
    sd.confirm(RUN, response="continue", actor="user")
    assert [e["stage"] for e in receipts(sd, "mandatory_checkpoint_response")] == ["2.5", "3"]
    assert row(sd, "mandatory_checkpoint_response")["artifacts"][0]["relative_path"] == path
    (request,) = receipts(sd, "explicit_user_request")
    assert request["response"] == "review" and request["stage"] == "2.5"
    assert row(sd, "explicit_user_request")["artifacts"][0]["artifact_role"] == "explicit_user_request_log"


def test_a_refused_skip_leaves_the_store_and_is_recorded_with_the_answer(sd: api.StateDir, repo: Path) -> None:
    at_mandatory(sd)
    before = snapshot(repo)
    code, out = cli_json("confirm", RUN, cwd=repo)
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION"
    assert out["error"]["details"]["skip_refused"] is True and "--skip-refused" in out["error"]["message"]
    assert snapshot(repo) == before
    code, out = cli_json("confirm", RUN, "--response", "continue", "--skip-refused", "--actor", "user", cwd=repo)
    assert code == 0, out
    (entry,) = receipts(sd, "mandatory_checkpoint_response")
    assert entry["outcome"] == "skip_refused" and entry["response"] == "continue"


def test_skip_refused_at_a_checkpoint_that_is_not_mandatory_is_refused(sd: api.StateDir, repo: Path) -> None:
    stage_one_done(sd, RUN)
    before = snapshot(repo)
    with pytest.raises(StatedirError) as exc:
        sd.confirm(RUN, response="continue", skip_refused=True)
    assert exc.value.code == "INVALID_VALUE" and "FULL" in exc.value.message
    assert snapshot(repo) == before


def test_a_row_the_caller_bound_is_left_as_it_is(sd: api.StateDir, repo: Path) -> None:
    at_mandatory(sd)
    sd.bind(RUN, "mandatory_checkpoint_response", artifact="m1", role="mandatory_checkpoint_response_log",
            group="SOURCE-GROUP-m", path="src/m1.json")
    sd.confirm(RUN, response="continue", actor="user")
    assert [a["artifact_id"] for a in row(sd, "mandatory_checkpoint_response")["artifacts"]] == ["m1"]
    assert len(receipts(sd, "mandatory_checkpoint_response")) == 1  # the receipt is written all the same

"""The user's acknowledgement of a blocking compliance report writes its action receipt: appended
to history/compliance_override_action_receipt/ in the override's own commit and bound beside the
report in the compliance_report row; `seal` still yields rows the upstream tool accepts (issue 33)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.gitops import git
from statedir.store import run_logs
from tests.support.ars import check_sealed, finish
from tests.support.runs import warned_then_blocked
from tests.support.util import cli, cli_json, cli_refused, copy_of

LOG = "compliance_override_action_receipt"


def receipts(sd: api.StateDir) -> list[dict[str, Any]]:
    return run_logs.read(sd.store, sd.store.run_dir("r"), LOG)


def compliance_row(sd: api.StateDir) -> dict[str, Any]:
    return next(r for r in sd.get("r", "pending_adjudication_activity_bindings")
                if r["source_family"] == "compliance_report")


@pytest.fixture
def blocked(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    return copy_of("compliance-receipt-blocked", warned_then_blocked, repo, tmp_path_factory)[0]


def test_the_override_writes_its_receipt_and_binds_it_beside_the_report(blocked: api.StateDir, repo: Path) -> None:
    sd = blocked
    cli_refused(repo, "PERMISSION_DENIED", "compliance", "r", "2.5", "--override", "--reason", "x",
                "--actor", "compliance_agent")  # refused: no receipt, nothing written
    assert receipts(sd) == []
    before = git.head(repo)
    code, out = cli_json("compliance", "r", "2.5", "--override", "--reason", "the block is a false positive",
                         "--actor", "user", cwd=repo)
    assert code == 0 and out["decision"] == "override", out  # type: ignore[index]
    (entry,) = receipts(sd)
    assert entry["source_family"] == "compliance_report" and entry["artifact_role"] == LOG
    assert entry["stage"] == "2.5" and entry["receipt_stage"] == "pipeline_stage_2_5"
    assert entry["report_round"] == 2 and entry["decision"] == "block" and entry["action"] == "user_override"
    assert entry["override_round"] == 1 and entry["reason"] == "the block is a false positive"
    assert entry["answered_by"] == "user" and entry["artifact_group_id"] == "SOURCE-GROUP-compliance-2.5-r2"
    assert entry["report"]["path"] == "block.json"
    row = compliance_row(sd)
    assert [(a["artifact_group_id"], a["artifact_role"]) for a in row["artifacts"]] == [
        ("SOURCE-GROUP-compliance-2.5-r1", "compliance_report"),  # the warn: report only
        ("SOURCE-GROUP-compliance-2.5-r2", "compliance_report"),
        ("SOURCE-GROUP-compliance-2.5-r2", LOG)]
    path = row["artifacts"][2]["relative_path"]
    assert path.startswith("state/runs/r/history/compliance_override_action_receipt/") and (repo / path).is_file()
    changed = git.run(repo, "diff", "--name-only", before, "HEAD").stdout.decode().split()  # the override's commit
    assert git.run(repo, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == b"1"
    assert path in changed and "state/runs/r/state.yaml" in changed
    assert cli("verify", cwd=repo).returncode == 0  # the receipt replays as the override wrote it


def test_a_run_with_an_overridden_block_seals_under_the_upstream_rules(blocked: api.StateDir, repo: Path) -> None:
    sd, run = blocked, "r"
    sd.compliance(run, "2.5", override=True, reason="a false positive", actor="user")
    sd.stage(run, "2.5", "completed")
    sd.confirm(run, response="continue", actor="user")
    sd.material(run, ["review_reports"])
    sd.material(run, ["revision_roadmap"])
    sd.stage(run, "3", "completed", decision="major_revision")
    sd.confirm(run, response="continue", actor="user")
    sd.material(run, ["revised_draft"])
    sd.revision(run, items_total=1, items_addressed=1)
    sd.stage(run, "4", "completed")
    sd.confirm(run, response="continue")
    finish(sd, run)
    code, out = cli_json("seal", run, "--artifact-root", str(repo), cwd=repo)
    assert code == 0, out
    code, doc = cli_json("show", run, "--format", "ars", cwd=repo)
    assert code == 0
    check_sealed(doc, repo)  # type: ignore[arg-type]
    (row,) = [r for r in doc["adjudication_activity_sources"]  # type: ignore[index]
              if r["source_family"] == "compliance_report"]
    assert [a["artifact_role"] for a in row["artifacts"]] == ["compliance_report", "compliance_report", LOG]

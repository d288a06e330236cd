"""The prohibited transitions against a real store: refused, and the store byte-identical."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli_json, snapshot

from statedir import api

INTEGRITY = "integrity_verification"


def drive(sd: api.StateDir, until: str) -> None:
    """Complete stages up to `until` (which is left completed with its checkpoint open)."""
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")
    sd.material("r1", ["paper_draft"])
    steps = ["1", "2", "2.5", "3", "4", "3p", "4.5", "5"]
    for stage in steps:
        if stage in ("2.5", "4.5"):
            sd.integrity("r1", stage, "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
        if stage == "3":
            sd.material("r1", ["review_reports"])
            sd.material("r1", ["revision_roadmap"])
        if stage == "4":
            sd.material("r1", ["revised_draft"])
            sd.revision("r1", items_total=1, items_addressed=1)
        decision = {"3": "major_revision", "3p": "accept"}.get(stage)
        sd.stage("r1", stage, "completed", decision=decision)
        if stage == until:
            return
        sd.confirm("r1", response="continue")


@pytest.mark.parametrize("source,target", [("1", "3"), ("2", "3"), ("4", "5"), ("3p", "5"), ("5", "3"),
                                           ("2.5", "5"), ("4", "4.5")])
def test_prohibited_or_unlinked_moves_change_nothing(repo: Path, source: str, target: str) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    drive(sd, source)
    before = snapshot(repo)
    code, out = cli_json("confirm", "r1", "--next", target, "--response", "continue", cwd=repo)
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION"  # type: ignore[index]
    assert snapshot(repo) == before


def test_completed_stage_cannot_go_back_to_in_progress(repo: Path) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    drive(sd, "2")
    before = snapshot(repo)
    code, out = cli_json("stage", "r1", "1", "in_progress", cwd=repo)
    assert code == 1 and "redo" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before

"""rollback: one new commit, legal by the rules, that restores the run's mutable files as of a
commit; logs keep every entry, passports stay, version labels are never reused."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.history import drive, git
from tests.support.util import cli, cli_json, segment, snapshot


@pytest.mark.slow  # drives a run through a dozen transitions first, each a commit
def test_rollback_restores_state_and_stages_and_keeps_history(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 13)  # through the confirm after stage 2.5
    target, printed = seen[6]  # stage 2 completed, checkpoint open
    logs_before = sd.histories("p1")
    labels_before = set(sd.passports("p1"))
    code, out = cli_json("rollback", "p1", "--to", target[:12], "--reason", "the review found a flaw", cwd=repo)
    assert code == 0 and out["run_id"] == "p1" and out["rolled_back_to"] == target
    now = sd.show("p1")
    for key in ("pipeline_state", "current_stage", "checkpoint", "current_version", "materials", "stages"):
        assert now[key] == printed[key], key
    assert now["version_counters"] == {"research": 1, "paper_draft": 2, "integrity_mid": 2}  # never back
    assert printed["version_counters"] == {"research": 1, "paper_draft": 1}
    # the append-only logs keep every entry and gain the rollback's
    for name, entries in logs_before.items():
        assert now["history"][name][:len(entries)] == entries, name
    last = now["history"]["transitions"][-1]
    assert len(now["history"]["transitions"]) == len(logs_before["transitions"]) + 1
    assert (last["action"], last["reason"]) == ("rollback", "the review found a flaw")
    assert set(now["passports"]) == labels_before  # passports stay
    body = git(repo, "log", "-1", "--format=%B")
    assert "the review found a flaw" in body
    assert f"Statedir-Action: rollback\nStatedir-Rollback-To: {target}\n" in body
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        f"state/runs/p1/{segment('transitions')}", "state/runs/p1/stages/2.5.yaml", "state/runs/p1/stages/2.yaml",
        "state/runs/p1/stages/3.yaml", "state/runs/p1/state.yaml"]  # no passport, no other log
    assert sd.verify() == {"clean": True, "checked": 16, "findings": []}
    # the run goes on from there, and no version label is ever reused
    sd.confirm("p1", response="continue")
    again = sd.material("p1", ["paper_draft"])
    assert again["version_label"] == "paper_draft_v3"
    assert sd.verify()["clean"]


def test_rollback_of_a_rollback_and_the_log_shows_both(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 6)
    first = sd.rollback("p1", to=seen[2][0], reason="back to research")
    assert sd.show("p1")["current_version"] == seen[2][1]["current_version"]
    sd.rollback("p1", to=first["commit"] + "~1", reason="no, it was fine")
    assert sd.show("p1")["stages"] == seen[-1][1]["stages"]
    assert [e["action"] for e in sd.log("p1", action="rollback")] == ["rollback", "rollback"]
    assert sd.verify()["clean"]


def test_refusals_change_nothing(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 4)
    init = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    git(repo, "switch", "-q", "-c", "side")
    sd.confirm("p1")
    side = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "switch", "-q", "-")
    before = snapshot(repo)
    cases = [
        (["--to", side, "--reason", "r"], 1, "ILLEGAL_TRANSITION"),  # not an ancestor of HEAD
        (["--to", init, "--reason", "r"], 1, "ILLEGAL_TRANSITION"),  # holds no run p1
        (["--to", "HEAD", "--reason", "r"], 1, "ILLEGAL_TRANSITION"),  # nothing to roll back
        (["--to", seen[1][0], "--reason", "r", "--actor", "integrity_verification"], 1, "PERMISSION_DENIED"),
        (["--to", "nope", "--reason", "r"], 2, "INVALID_VALUE"),
        (["--to", seen[1][0], "--reason", " "], 2, "INVALID_VALUE"),
        (["--to", seen[1][0]], 2, "INVALID_VALUE"),  # --reason is required
    ]
    for args, code, error in cases:
        status, out = cli_json("rollback", "p1", *args, cwd=repo)
        assert (status, out["error"]["code"]) == (code, error), (args, out)
    status, out = cli_json("rollback", "p9", "--to", seen[1][0], "--reason", "r", cwd=repo)
    assert (status, out["error"]["code"]) == (2, "UNKNOWN_RUN")
    assert snapshot(repo) == before
    assert cli("rollback", "p1", "--to", side, "--reason", "r", cwd=repo).stderr.startswith("error:")


def test_a_terminal_run_is_not_rolled_back(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 3)
    sd.pipeline("p1", "aborted", reason="stop")
    status, out = cli_json("rollback", "p1", "--to", seen[1][0], "--reason", "undo the abort", cwd=repo)
    assert (status, out["error"]["code"]) == (1, "RUN_TERMINAL")

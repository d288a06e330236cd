"""Who answered a checkpoint: `answered_by` in its checkpoints log entry (the actor on the command
line, `user` where the user was asked: the MCP server at a MANDATORY checkpoint, tests/mcp), carried
in the recorded request so `verify` replays it; entries and requests from before it stay valid."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import statedir
from statedir import api
from statedir.engine import transaction
from statedir.engine.transition_data import Request
from tests.support.util import call


def answered(sd: api.StateDir, run_id: str) -> list[dict[str, Any]]:
    return [e for e in sd.histories(run_id)["checkpoints"] if e["event"] == "answered"]


def at_a_checkpoint(sd: api.StateDir, run_id: str) -> None:
    sd.new(run_id, topic="T", template="linear")
    sd.stage(run_id, "plan", "in_progress")
    sd.stage(run_id, "plan", "done")


def test_a_command_line_confirm_records_the_actor_who_answered(sd: api.StateDir) -> None:
    at_a_checkpoint(sd, "r1")
    code, out, _ = call(["confirm", "r1", "--actor", "pipeline_orchestrator", "--store", str(sd.store.root), "--json"])
    assert code == 0, out
    assert answered(sd, "r1")[-1]["answered_by"] == "pipeline_orchestrator"
    message = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=sd.store.worktree, capture_output=True,
                             text=True, check=True).stdout
    request = json.loads(message.split("Statedir-Request: ", 1)[1])
    assert request["args"]["answered_by"] == "pipeline_orchestrator"  # so verify decides it again the same
    assert sd.verify("r1")["clean"]


def test_the_user_answer_replays_and_older_entries_stay_valid(sd: api.StateDir, repo: Path) -> None:
    at_a_checkpoint(sd, "r1")
    sd.confirm("r1", answered_by="user")
    assert answered(sd, "r1")[-1]["answered_by"] == "user"
    # a confirm recorded before answered_by was: its request carries none, and neither does its entry
    at_a_checkpoint(sd, "r2")
    req = Request("confirm", "pipeline_orchestrator", {"next": None, "response": None})
    transaction.transition(sd.store, "r2", req)
    assert "answered_by" not in answered(sd, "r2")[-1]
    assert statedir.open(sd.store.root).validate()["valid"]
    result = sd.verify()
    assert result["clean"], result["findings"]


@pytest.mark.slow  # a whole run to its last checkpoint
def test_confirm_and_stage_completed_at_the_terminal_acknowledgement_are_one_refusal(sd: api.StateDir,
                                                                                     repo: Path) -> None:
    """Stage 6 in progress awaits `confirm --response done`: `confirm` without a response and
    `stage 6 completed` are the same situation, refused alike (exit 1, ILLEGAL_TRANSITION)."""
    from tests.support.history import drive, script
    from tests.support.util import cli_json, snapshot

    drive(sd, repo / "draft.md", len(script(repo / "draft.md")) - 1)
    assert sd.get("p1", "current_stage") == "6" and sd.get("p1", "stages.6.status") == "in_progress"
    before = snapshot(repo)
    answers = [cli_json("confirm", "p1", cwd=repo), cli_json("stage", "p1", "6", "completed", cwd=repo)]
    assert [(code, out["error"]["code"]) for code, out in answers] == [(1, "ILLEGAL_TRANSITION")] * 2  # type: ignore[index]
    assert all("--response done" in out["error"]["message"] for _, out in answers)  # type: ignore[index]
    # every word that ends the run is named where a user tries to complete stage 6 (it read `done` alone)
    assert "(or finish, end, confirm)" in answers[1][1]["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before

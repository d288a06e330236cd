"""The API's reads for viewers of many runs (statedir/api/overview.py): summaries without
opening other runs, the runs a move changed, HEAD, bus sessions, research records, signatures."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import statedir
from statedir.errors import InvalidValue, StatedirError


def _head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()


def test_a_summary_holds_the_last_change_with_its_reason(sd: statedir.api.StateDir) -> None:
    sd.new("r1", topic="T")
    sd.pipeline("r1", "paused", reason="waiting for data")
    summary = sd.run_summary("r1")
    assert summary["pipeline_state"] == "paused" and summary["topic"] == "T"
    assert summary["last"]["action"] == "pipeline" and summary["last"]["reason"] == "waiting for data"
    assert sd.run_ids() == ["r1"] and sd.run_summaries([]) == []


def test_a_broken_run_is_summarised_with_its_error(sd: statedir.api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="T")
    sd.new("r2", topic="T")
    (repo / "state/runs/r1/state.yaml").write_text("run_id: [unclosed\n")
    broken, fine = sd.run_summaries(["r1", "r2"])
    assert broken["error"]["code"] and broken["pipeline_state"] is None and broken["last"] is None
    assert fine["pipeline_state"] == "initializing" and "error" not in fine
    with pytest.raises(StatedirError):
        sd.run_summary("../etc")


def test_changed_runs_names_the_runs_a_move_touched(sd: statedir.api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="T")
    sd.new("r2", topic="T")
    start = _head(repo)
    sd.pipeline("r2", "paused")
    sd.bus("2026-06-30-member-blog").set("phase", "x")  # a commit outside runs/
    assert sd.changed_runs(start, _head(repo)) == {"r2"} and sd.head() == _head(repo)
    sd.new("r3", topic="T")
    assert sd.changed_runs(start, _head(repo)) == {"r2", "r3"}


def test_bus_sessions_and_research_records(sd: statedir.api.StateDir) -> None:
    assert sd.bus_sessions() == [] and sd.research_records("project") == []
    sd.bus("2026-06-30-member-blog").set("phase", "x")
    project = sd.research.create_project("P")["id"]
    sd.research.create_question("Q?", project_id=project)
    assert sd.bus_sessions() == ["2026-06-30-member-blog"]
    assert [q["text"] for q in sd.research_records("question")] == ["Q?"]
    with pytest.raises(InvalidValue):
        sd.research_records("projects")


def test_signed_names_only_signed_commits(sd: statedir.api.StateDir, repo: Path, tmp_path: Path) -> None:
    sd.new("r1", topic="T")
    assert sd.signed("r1") == set()
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    (repo / "state/runs/r1/notes.txt").write_text("by hand\n")
    subprocess.run(["git", "add", "state/runs/r1/notes.txt"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q", "-S",
                    "-m", "signed by hand"], cwd=repo, check=True)
    assert sd.signed("r1") == {_head(repo)}

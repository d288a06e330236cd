"""The FULL checkpoint's decision dashboard (confirm --metric, --quality), a regressed quality
holding the pipeline until the user answers, and the round-trip counter per checkpoint."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.store import run_logs
from tests.support.util import cli, cli_json, snapshot, stage_one_done

RUN = "run-d"


def at_stage_one(sd: api.StateDir) -> None:
    """Stage 1 completed: its FULL checkpoint open."""
    stage_one_done(sd, RUN, "dashboard")


def test_the_dashboard_is_recorded_with_the_answer(sd: api.StateDir, repo: Path) -> None:
    at_stage_one(sd)
    assert sd.get(RUN, "checkpoint")["round_trip"] == 1
    code, moves = cli_json("next", RUN, cwd=repo)
    confirm = next(m for m in moves["moves"] if m["command"] == "confirm")
    assert confirm["optional"] == ["metric", "quality"]
    code, out = cli_json("confirm", RUN, "--metric", "word_count=5200", "--metric", "references=42",
                         "--metric", "coverage=5/6", "--quality", "not_comparable", cwd=repo)
    assert code == 0, out
    stage = sd.show(RUN)["stages"]["1"]
    assert stage["dashboard"]["metrics"] == {"word_count": 5200, "references": 42, "coverage": "5/6"}
    assert stage["dashboard"]["quality"] == "not_comparable"
    answered = [e for e in run_logs.read(sd.store, sd.store.run_dir(RUN), "checkpoints") if e["event"] == "answered"]
    assert answered[-1]["dashboard"]["quality"] == "not_comparable" and answered[-1]["round_trip"] == 1
    assert sd.get(RUN, "pipeline_state") == "running" and sd.get(RUN, "current_stage") == "2"
    assert sd.get(RUN, "checkpoint_round_trips") == {"1": 1}


def test_a_regressed_quality_holds_the_pipeline_until_the_user_answers(sd: api.StateDir, repo: Path) -> None:
    at_stage_one(sd)
    result = sd.confirm(RUN, metrics=["word_count=4000"], quality="regressed")
    assert result["held"] == "regressed" and "paused" in result["summary"]
    assert sd.get(RUN, "pipeline_state") == "paused" and sd.get(RUN, "current_stage") == "1"
    assert sd.get(RUN, "checkpoint")["held"] == "regressed"
    shown = cli("status", RUN, cwd=repo).stdout
    assert "Held: quality regressed" in shown and "Word Count: 4000" in shown
    before = snapshot(repo)
    for args in (["confirm", RUN], ["confirm", RUN, "--quality", "ok", "--response", "continue"]):
        code, out = cli_json(*args, cwd=repo)
        assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION", out
        assert snapshot(repo) == before
    code, out = cli_json("confirm", RUN, "--response", "review", cwd=repo)  # relayed: the user's answer
    assert code == 0, out
    assert sd.get(RUN, "pipeline_state") == "running" and sd.get(RUN, "current_stage") == "2"
    assert sd.get(RUN, "paused_from") is None
    answered = [e for e in run_logs.read(sd.store, sd.store.run_dir(RUN), "checkpoints") if e["event"] == "answered"]
    assert answered[-1]["answered_by"] == "user" and answered[-1]["response"] == "review"
    assert cli("verify", cwd=repo).returncode == 0


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"metrics": ["pages=3"]}, "word_count, references, coverage"),
    ({"metrics": ["word_count=many"]}, "whole number"),
    ({"metrics": ["coverage=7/6"]}, "N/T"),
    ({"metrics": ["coverage=1/0"]}, "N/T"),
    ({"metrics": ["references=1", "references=2"]}, "twice"),
    ({"quality": "better"}, "ok, regressed, not_comparable"),
])
def test_bad_dashboard_input_is_refused_naming_what_is_allowed(sd: api.StateDir, repo: Path,
                                                              kwargs: dict[str, object], needle: str) -> None:
    at_stage_one(sd)
    before = snapshot(repo)
    with pytest.raises(StatedirError) as exc:
        sd.confirm(RUN, **kwargs)  # type: ignore[arg-type]
    assert exc.value.code == "INVALID_VALUE" and needle in exc.value.message
    assert snapshot(repo) == before


def test_a_mandatory_checkpoint_takes_no_dashboard_and_round_trips_count_per_stage(sd: api.StateDir,
                                                                                   repo: Path) -> None:
    at_stage_one(sd)
    sd.confirm(RUN, response="continue")
    sd.material(RUN, ["paper_draft"])
    sd.stage(RUN, "2", "completed")
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "2.5", "PASS", refs_total=3, refs_verified=3, issues_found=0, issues_fixed=0,
                 actor="integrity_verification")
    from tests.support.util import CLEAR_ITEMS

    sd.checklist(RUN, "2.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage(RUN, "2.5", "completed")
    before = snapshot(repo)
    with pytest.raises(StatedirError) as exc:
        sd.confirm(RUN, response="continue", quality="ok")
    assert exc.value.code == "INVALID_VALUE" and "FULL" in exc.value.message
    assert snapshot(repo) == before
    assert sd.get(RUN, "checkpoint_round_trips") == {"1": 1, "2": 1, "2.5": 1}


def test_a_checkpoint_opened_again_counts_its_round_trips(sd: api.StateDir, repo: Path) -> None:
    at_stage_one(sd)
    sd.confirm(RUN, response="continue")
    sd.redo(RUN, "1", reason="the brief changed")
    sd.stage(RUN, "1", "in_progress")
    sd.stage(RUN, "1", "completed")
    assert sd.get(RUN, "checkpoint")["round_trip"] == 2
    shown = cli("status", RUN, cwd=repo).stdout
    assert "(2 round trips)" in shown and "round trip 2" in shown

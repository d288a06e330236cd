"""Transitions say what they did and what they could not: confirm's warnings and legal --next
choices, an idempotent start of the current stage, redo naming what it resets."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.util import cli, cli_json, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A linear run whose plan stage is done: made through the API (what is tested is the CLI's next call)."""
    sd.new("r", template="linear")
    sd.stage("r", "plan", "in_progress")
    sd.stage("r", "plan", "done")
    return repo / "state"


def test_confirm_warns_of_missing_recommended_materials_in_json_too(store: Path) -> None:
    code, out = cli_json("confirm", "r", cwd=store)
    assert code == 0 and out["missing_recommended"] == ["plan"]  # type: ignore[index]
    assert "recommended material missing for stage build: plan" in out["warning"]  # type: ignore[index]
    code, prereq = cli_json("prereq", "r", "build", cwd=store)
    assert prereq["warning"] == out["warning"]  # type: ignore[index]


def test_confirm_text_shows_the_warning(store: Path) -> None:
    proc = cli("confirm", "r", cwd=store)
    assert proc.returncode == 0 and "warning  recommended material missing" in proc.stdout


def test_a_refused_next_names_the_legal_choices(store: Path) -> None:
    before = snapshot(store.parent)
    code, out = cli_json("confirm", "r", "--next", "check", cwd=store)
    assert code == 1 and out["error"]["message"].endswith("--next takes: build")  # type: ignore[index]
    assert out["error"]["details"]["choices"] == ["build"]  # type: ignore[index]
    assert snapshot(store.parent) == before


def test_confirm_response_review_is_documented() -> None:
    text = " ".join(cli("confirm", "--help").stdout.split())
    assert "review goes on after the user reviewed the work" in text


def test_starting_the_stage_confirm_started_is_a_no_op_with_a_note(store: Path, sd: api.StateDir) -> None:
    sd.confirm("r")
    before = snapshot(store.parent)
    code, out = cli_json("stage", "r", "build", "in_progress", cwd=store)
    assert code == 0 and out["commit"] is None and out["changed"] is False  # type: ignore[index]
    assert "already in_progress" in out["summary"]  # type: ignore[index]
    assert snapshot(store.parent) == before
    proc = cli("stage", "r", "build", "in_progress", cwd=store)
    assert proc.returncode == 0 and "nothing changed" in proc.stdout
    code, out = cli_json("stage", "r", "plan", "done", cwd=store)  # the closed stage: still refused
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION"  # type: ignore[index]


def test_redo_names_what_it_resets(store: Path, sd: api.StateDir) -> None:
    sd.confirm("r")
    code, out = cli_json("redo", "r", "plan", "--reason", "the plan was wrong", cwd=store)
    assert code == 0 and out["reset"] == [{"stage": "build", "was": "in_progress"}]  # type: ignore[index]
    assert out["summary"] == "redo stage plan; reset to todo: stage build (was in_progress)"  # type: ignore[index]
    assert cli("get", "r", "stages.build.status", cwd=store).stdout == "todo\n"
    assert cli("verify", cwd=store).returncode == 0  # replay agrees with what was written


def test_a_transition_over_a_hand_edited_run_warns_naming_the_file_and_the_rule(repo: Path, sd: api.StateDir) -> None:
    """A stage set in progress by hand and committed with --no-verify: the next transition goes
    through the rules, leaves that file alone and says on stderr (and in --json) what is wrong."""
    import subprocess

    sd.new("r1", topic="t")
    stage3 = repo / "state/runs/r1/stages/3.yaml"  # a stage says nothing until it starts: no file yet
    stage3.parent.mkdir(exist_ok=True)
    stage3.write_text("id: '3'\nname: REVIEW\nstatus: in_progress\n")
    subprocess.run(["git", "add", str(stage3)], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "quick fix", "--no-verify"], cwd=repo, check=True)
    edited = stage3.read_bytes()
    proc = cli("stage", "r1", "1", "in_progress", cwd=repo)
    assert proc.returncode == 0 and proc.stdout.startswith("ok")
    warning = "runs/r1/stages/3.yaml::$.status: stage 3 is in_progress, but the run's current stage is '1'"
    assert f"warning: {warning}" in proc.stderr and "statedir validate" in proc.stderr
    code, out = cli_json("set", "r1", "topic", "u", "--reason", "r", cwd=repo)
    assert code == 0 and any(w.startswith(warning) for w in out["warnings"])  # type: ignore[index]
    assert stage3.read_bytes() == edited  # the transition rewrote only what it changed
    assert sd.set("r1", "topic", "v", reason="r")["warnings"][0].startswith(warning)  # the API's result too
    stage3.write_text(stage3.read_text().replace("status: in_progress", "status: pending"))
    subprocess.run(["git", "commit", "-qam", "undo the quick fix", "--no-verify"], cwd=repo, check=True)
    assert "warning" not in cli("set", "r1", "topic", "x", "--reason", "r", cwd=repo).stderr


def test_a_transition_that_opens_a_checkpoint_says_how_to_answer_it(repo: Path, sd: api.StateDir) -> None:
    """`stage ... completed` names the checkpoint it opened and the command that answers it (in
    --json as `checkpoint`); `status --line` shows it while it is open, and no longer once answered."""
    sd.new("r", template="linear")
    sd.stage("r", "plan", "in_progress")
    store = repo / "state"
    proc = cli("stage", "r", "plan", "done", cwd=store)
    assert proc.returncode == 0 and "checkpoint open (" in proc.stdout and "statedir confirm r" in proc.stdout
    assert "checkpoint open:" in cli("status", "r", "--line", cwd=store).stdout
    code, out = cli_json("confirm", "r", cwd=store)
    assert code == 0 and "checkpoint" not in out  # type: ignore[operator]
    assert "checkpoint" not in cli("status", "r", "--line", cwd=store).stdout


def test_a_refusal_by_the_rules_points_to_next(store: Path) -> None:
    proc = cli("stage", "r", "check", "done", cwd=store)
    assert proc.returncode == 1 and "what is legal now: statedir next r" in proc.stderr
    code, out = cli_json("stage", "r", "check", "done", cwd=store)
    assert code == 1 and out["error"]["details"]["run_id"] == "r"  # type: ignore[index]
    unknown = cli("stage", "nope", "check", "done", cwd=store)  # no such run: nothing to point to
    assert unknown.returncode == 2 and "statedir next" not in unknown.stderr

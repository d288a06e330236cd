"""The chain Project -> Question -> Hypothesis -> Experiment -> Run: placeholders, the
one-level rule, foreign keys checked at write time, one file per entity, one commit per write; a
closed Run takes nothing more."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from statedir.errors import StatedirError
from statedir.research import Ledger
from statedir.store.layout import schema_ref
from tests.support.research import commits, files, git
from tests.support.util import cli, snapshot

ID = re.compile(r"^(proj|q|hyp|exp|run|src|evd|res|clm)_\d{8}_[0-9a-f]{6}$")


def test_start_run_with_question_text_fills_the_chain_in_one_commit(ledger: Ledger, store: Path) -> None:
    before = commits(store.parent)
    run = ledger.start_run("deep-research", mode="full", question_text="Does this need offline support?")
    assert commits(store.parent) == before + 1 and git(store.parent, "rev-parse", "HEAD") == run["commit"]
    assert ID.match(run["id"]) and run["id"].startswith("run_") and run["status"] == "running"
    assert run["mode"] == "full" and run["ended_at"] is None
    question = ledger.query(question_id=run["question_id"])
    assert question["questions"][0]["text"] == "Does this need offline support?"
    assert question["questions"][0]["project_id"] == "proj_default" and question["questions"][0]["status"] == "open"
    [hypothesis] = question["hypotheses"]
    assert hypothesis["synthetic"] is True and hypothesis["id"] == run["hypothesis_id"]
    [experiment] = ledger.query(hypothesis_id=hypothesis["id"])["experiments"]
    assert experiment["synthetic"] is True and experiment["id"] == run["experiment_id"]
    assert files(store, "projects") == ["proj_default"]
    changed = git(store.parent, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert sorted(changed) == sorted(f"state/research/{folder}/{entity}.yaml" for folder, entity in (
        ("projects", "proj_default"), ("questions", run["question_id"]), ("hypotheses", run["hypothesis_id"]),
        ("experiments", run["experiment_id"]), ("runs", run["id"])))
    body = git(store.parent, "log", "-1", "--format=%B")
    assert f"Statedir-Run: {run['id']}" in body and "Statedir-Action: research" in body


def test_each_level_fills_only_the_levels_below_it(ledger: Ledger, store: Path) -> None:
    question = ledger.create_question("Q?", "research-project-init")
    hypothesis = ledger.create_hypothesis(question["id"], "H.", created_by="deep-research")
    experiment = ledger.create_experiment(hypothesis["id"], "Survey logs.", created_by="deep-research")
    assert hypothesis["synthetic"] is False and experiment["synthetic"] is False
    assert hypothesis["status"] == "proposed" and experiment["status"] == "planned"

    direct = ledger.start_run("s", experiment_id=experiment["id"])
    assert (direct["experiment_id"], direct["hypothesis_id"], direct["question_id"]) == (
        experiment["id"], hypothesis["id"], question["id"])
    via_hypothesis = ledger.start_run("s", hypothesis_id=hypothesis["id"])
    placeholder = ledger.query(experiment_id=via_hypothesis["experiment_id"])["experiments"][0]
    assert placeholder["synthetic"] is True and placeholder["hypothesis_id"] == hypothesis["id"]
    via_question = ledger.start_run("s", question_id=question["id"])
    assert via_question["question_id"] == question["id"] and via_question["hypothesis_id"] != hypothesis["id"]
    assert len(files(store, "questions")) == 1 and len(files(store, "hypotheses")) == 2
    assert len(files(store, "experiments")) == 3


def test_a_run_naming_no_level_stays_standalone_and_creates_nothing(ledger: Ledger, store: Path) -> None:
    run = ledger.start_run("deep-research")
    assert (run["question_id"], run["hypothesis_id"], run["experiment_id"]) == (None, None, None)
    assert files(store, "runs") == [run["id"]]
    for folder in ("projects", "questions", "hypotheses", "experiments"):
        assert files(store, folder) == []


@pytest.mark.parametrize("levels", [
    {"question_text": "Q?", "experiment_id": "exp_x"},
    {"question_id": "q_x", "hypothesis_id": "hyp_x"},
    {"hypothesis_id": "hyp_x", "experiment_id": "exp_x"},
    {"question_text": "Q?", "question_id": "q_x"},
])
def test_naming_two_levels_is_refused_and_changes_nothing(ledger: Ledger, store: Path, levels: dict[str, str]) -> None:
    before = snapshot(store.parent)
    with pytest.raises(StatedirError) as refused:
        ledger.start_run("s", **levels)
    assert refused.value.code == "INVALID_VALUE" and refused.value.exit_code == 2
    assert snapshot(store.parent) == before


@pytest.mark.parametrize(("call", "code"), [
    (lambda lg: lg.start_run("s", question_id="q_20260101_000000"), "UNKNOWN_QUESTION"),
    (lambda lg: lg.start_run("s", hypothesis_id="hyp_20260101_000000"), "UNKNOWN_HYPOTHESIS"),
    (lambda lg: lg.start_run("s", experiment_id="exp_20260101_000000"), "UNKNOWN_EXPERIMENT"),
    (lambda lg: lg.start_run("s", question_text="Q?", project_id="proj_nope"), "UNKNOWN_PROJECT"),
    (lambda lg: lg.create_question("Q?", project_id="proj_nope"), "UNKNOWN_PROJECT"),
    (lambda lg: lg.create_hypothesis("q_nope", "H."), "UNKNOWN_QUESTION"),
    (lambda lg: lg.create_experiment("hyp_nope", "E."), "UNKNOWN_HYPOTHESIS"),
    (lambda lg: lg.complete_run("run_nope", "completed"), "UNKNOWN_RUN"),
    (lambda lg: lg.record_result("run_nope", "S"), "UNKNOWN_RUN"),
    (lambda lg: lg.answer_question("q_nope"), "UNKNOWN_QUESTION"),
    (lambda lg: lg.set_hypothesis_status("hyp_nope", "supported"), "UNKNOWN_HYPOTHESIS"),
    (lambda lg: lg.set_experiment_status("exp_nope", "running"), "UNKNOWN_EXPERIMENT"),
    (lambda lg: lg.start_run("s", question_id="../../etc"), "INVALID_ID"),
    (lambda lg: lg.start_run(""), "INVALID_VALUE"),
    (lambda lg: lg.create_project(""), "INVALID_VALUE"),
])
def test_foreign_keys_are_checked_at_write_time(ledger: Ledger, store: Path, call, code: str) -> None:  # type: ignore[no-untyped-def]
    before = snapshot(store.parent)
    with pytest.raises(StatedirError) as refused:
        call(ledger)
    assert refused.value.code == code and refused.value.exit_code == 2
    assert snapshot(store.parent) == before  # no placeholder, no proj_default, no commit


def test_statuses_and_their_vocabularies(ledger: Ledger, store: Path) -> None:
    run = ledger.start_run("s", question_text="Q?")
    assert ledger.complete_run(run["id"], "failed")["status"] == "failed"
    closed = ledger.query(run_id=run["id"])["runs"][0]
    assert closed["status"] == "failed" and closed["ended_at"] is not None
    assert ledger.answer_question(run["question_id"])["status"] == "answered"
    assert ledger.abandon_question(run["question_id"])["status"] == "abandoned"
    assert ledger.set_hypothesis_status(run["hypothesis_id"], "refuted")["status"] == "refuted"
    # Status is a label, not a guarded lifecycle (as in the seed): completed can go back to running.
    assert ledger.set_experiment_status(run["experiment_id"], "completed")["status"] == "completed"
    assert ledger.set_experiment_status(run["experiment_id"], "running")["status"] == "running"
    before = snapshot(store.parent)
    for call in (lambda: ledger.complete_run(run["id"], "running"),
                 lambda: ledger.set_question_status(run["question_id"], "open"),
                 lambda: ledger.set_hypothesis_status(run["hypothesis_id"], "proposed"),
                 lambda: ledger.set_experiment_status(run["experiment_id"], "planned")):
        with pytest.raises(StatedirError, match="must be one of") as refused:
            call()
        assert refused.value.code == "INVALID_VALUE"
    assert snapshot(store.parent) == before


def test_files_carry_modeline_and_version_and_pass_statedir_validate(ledger: Ledger, store: Path) -> None:
    from statedir.engine import validate

    run = ledger.start_run("s", question_text="Q?")
    ledger.record_result(run["id"], "S", artifact_role="bibliography", artifact_path="sources.bib")
    ledger.record_claim(run["id"], "C", confidence="low")
    written = sorted((store / "research").rglob("*.yaml"))
    assert len(written) == 7
    for path in written:
        rel = path.relative_to(store).as_posix()
        text = path.read_text()
        assert text.startswith(f"# yaml-language-server: $schema={schema_ref(rel)}\n")
        assert "\nschema_version: 1\n" in text
        assert (store / ".schemas" / schema_ref(rel).rsplit("/", 1)[1]).is_file()
    assert validate.store(store) == []
    bad = store / "research" / "runs" / f"{run['id']}.yaml"
    bad.write_text(bad.read_text().replace("status: running", "status: sleeping"))
    problems = validate.store(store)
    assert [(p.file, p.path) for p in problems] == [(f"research/runs/{run['id']}.yaml", "$.status")]


def test_actor_is_the_commit_author(ledger: Ledger, store: Path) -> None:
    ledger.start_run("bibliography_agent")
    assert git(store.parent, "log", "-1", "--format=%an") == "bibliography_agent"
    ledger.actor = "someone"
    ledger.create_project("P")
    assert git(store.parent, "log", "-1", "--format=%an") == "someone"


def test_the_pre_commit_hook_covers_every_research_file(ledger: Ledger, store: Path) -> None:
    from tests.support.util import ROOT

    hook = (ROOT / ".pre-commit-hooks.yaml").read_text()
    pattern = re.compile(re.search(r"^\s+files: (.+)$", hook, re.M).group(1))  # type: ignore[union-attr]
    run = ledger.start_run("s", question_text="Q?")
    source = ledger.create_source("T")
    ledger.create_evidence(source["id"], run["question_id"], "S", "refutes")
    ledger.record_result(run["id"], "R")
    ledger.record_claim(run["id"], "C")
    written = [p.relative_to(store.parent).as_posix() for p in (store / "research").rglob("*.yaml")]
    assert {p.split("/")[2] for p in written} == {"projects", "questions", "hypotheses", "experiments", "runs",
                                                 "sources", "evidence", "results", "claims"}
    for rel in written:
        assert pattern.search(rel), rel


def test_the_cli_refuses_a_claim_or_a_second_completion_on_a_completed_run(repo: Path, sd: object) -> None:
    """A closed research Run takes no more Claims nor a second completion from the CLI either: nothing written."""
    store = str(repo / "state")
    run = json.loads(cli("research", "--start-run", "--skill", "s", "--json", "--store", store).stdout)["id"]
    assert cli("research", "--complete-run", "--run-id", run, "--status", "completed", "--store", store).returncode == 0
    saved = snapshot(repo)
    for more in (["--record-claim", "--statement", "x"], ["--complete-run", "--status", "failed"]):
        proc = cli("research", *more, "--run-id", run, "--store", store)
        assert proc.returncode != 0 and "ILLEGAL_TRANSITION" in proc.stdout and "is completed" in proc.stdout
        assert "--start-run" in proc.stdout and "Traceback" not in proc.stderr
    assert snapshot(repo) == saved

"""Templates checked for meaning at `new --template` and `validate`, each problem with its line;
a stored template evolves by version, and runs keep theirs."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from statedir.engine.rules.decision import HANDLERS
from statedir.engine.template import meaning as template_meaning
from tests.support.util import cli, cli_json, own_template, snapshot


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


MAY = "may: [new, stage, pipeline, set, material, confirm, redo, output, rollback]"
BROKEN = [
    ((MAY, MAY.replace("rollback]", "rollback, fly]")), "fly", "no statedir action"),
    (("produces: [plan]", "produces: [plann]"), "plann", "neither a material nor a version series"),
    (("default_actor: pipeline_orchestrator", "default_actor: boss"), "boss", "is not one of the roles"),
    # a file named by path may be any file: the schema's complaints say what it expected, not what it found
    (("{id: check, name: CHECK,", "{id: check, checkpoint: HUGE, name: CHECK,"), "HUGE", "expected one of"),
    (("{id: check, name: CHECK,", "{id: check, nmae: CHECK, name: CHECK,"), "nmae", "properties not allowed here"),
    (("  - {from: check, to: deliver}\n", ""), "{id: check,", "can never reach completed"),
]


@pytest.mark.parametrize(("edit", "needle", "words"), BROKEN)
def test_a_template_that_means_nothing_is_refused_with_its_line(sd: api.StateDir, repo: Path,
                                                                edit: tuple[str, str], needle: str, words: str) -> None:
    path = own_template(repo, "my.yaml", edit)
    line = line_of(path, needle)
    before = snapshot(repo)
    code, out = cli_json("new", "r1", "--topic", "t", "--template", str(path), cwd=repo)
    assert code == 2 and out["error"]["code"] == "BAD_FILE"  # type: ignore[index]
    assert f"my.yaml:{line}:" in out["error"]["message"] and words in out["error"]["message"], out  # type: ignore
    assert snapshot(repo) == before
    code, out = cli_json("validate", "--schema", "template", str(path), cwd=repo)
    assert code == 1
    assert any(e["message"].startswith(f"line {line}: ") and words in e["message"]
               for e in out["errors"]), out  # type: ignore[index]


def test_every_meaning_problem_is_reported_at_once(repo: Path) -> None:
    """(Shape comes first: a template the schema refuses is not read for meaning.)"""
    path = own_template(repo, "my.yaml", *(edit for edit, needle, _ in BROKEN if needle not in ("HUGE", "nmae")))
    proc = cli("validate", "--schema", "template", str(path), cwd=repo)
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 4, proc.stdout


def test_the_action_vocabulary_is_what_the_engine_handles() -> None:
    assert set(template_meaning.ACTIONS) == {*HANDLERS, "new", "rollback"}  # rollback: statedir.history


@pytest.mark.slow  # a template's versions through the store's history
def test_a_stored_template_evolves_by_version_and_runs_keep_theirs(sd: api.StateDir, repo: Path) -> None:
    v1 = own_template(repo, "v1.yaml")
    assert cli("new", "a", "--topic", "t", "--template", str(v1), cwd=repo).returncode == 0
    edited = own_template(repo, "edited.yaml", ("title: Linear Pipeline", "title: My Pipeline"))
    before = snapshot(repo)
    code, out = cli_json("new", "b", "--topic", "t", "--template", str(edited), cwd=repo)
    assert code == 2 and "give your edited template a new version" in out["error"]["message"]  # type: ignore
    assert "version: '2'" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before
    v2 = own_template(repo, "v2.yaml", ("title: Linear Pipeline", "title: My Pipeline"),
                      ("version: '1'", "version: '2'"), ("{id: deliver, name: DELIVER,", "{id: deliver, name: SHIP,"))
    code, out = cli_json("new", "b", "--topic", "t", "--template", str(v2), cwd=repo)
    assert code == 0, out
    store = repo / "state"
    assert (store / "templates" / "mypipe@1.yaml").is_file() and "version: '2'" in (
        store / "templates" / "mypipe.yaml").read_text()
    assert sd.get("a", "template_version") == "1" and sd.get("b", "template_version") == "2"
    assert sd.get("a", "stages.deliver.name") == "DELIVER" and sd.get("b", "stages.deliver.name") == "SHIP"
    sd.stage("a", "plan", "in_progress")  # the old run goes on, on its own version
    for run, version in (("a", "1"), ("b", "2")):
        first = (store / "runs" / run / "state.yaml").read_text().splitlines()[0]
        assert first.endswith(f".schemas/mypipe/{version}/run-state.schema.json")
    assert cli("validate", cwd=repo).returncode == 0
    # version 1 again, unchanged, is fine; version 1 with other content is refused
    assert cli("new", "c", "--topic", "t", "--template", str(v1), cwd=repo).returncode == 0
    other = own_template(repo, "other.yaml", ("title: Linear Pipeline", "title: Other"),
                         ("version: '1'", "version: '2'"))
    code, out = cli_json("new", "d", "--topic", "t", "--template", str(other), cwd=repo)
    assert code == 2 and "never used before" in out["error"]["message"]  # type: ignore[index]


def test_mid_entry_registers_materials_at_entry_points_only() -> None:
    import copy

    from statedir.engine import template as template_mod

    doc = copy.deepcopy(template_mod.load("academic-pipeline").doc)
    assert template_meaning.problems(doc) == []
    doc["mid_entry"]["registers"] = {"4.5": ["review_reports", "comments"]}
    assert template_meaning.problems(doc) == [
        (["mid_entry", "registers", "4.5"], "'4.5' is not an entry point"),
        (["mid_entry", "registers", "4.5", 1], "unknown material 'comments'")]

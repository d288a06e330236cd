"""Queries by every filter, the index (incremental, deleted, corrupt, rebuilt), --validate
on a hand edit, and the schema-version check."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from statedir.errors import StatedirError
from statedir.research import Ledger
from statedir.research.index import path_of
from tests.support.research import git, research
from tests.support.util import cli, snapshot


@pytest.fixture
def world(ledger: Ledger) -> dict[str, dict]:  # type: ignore[type-arg]
    project = ledger.create_project("Offline Support", description="d", created_by="init")
    run = ledger.start_run("deep-research", question_text="Q?", project_id=project["id"])
    other = ledger.start_run("bibliography_agent", experiment_id=run["experiment_id"])
    source = ledger.create_source("T", project_id=project["id"])
    evidence = ledger.create_evidence(source["id"], run["question_id"], "S", "mixed",
                                      hypothesis_id=run["hypothesis_id"])
    result = ledger.record_result(run["id"], "R")
    claim = ledger.record_claim(run["id"], "C", evidence_id=evidence["id"])
    ledger.start_run("deep-research")  # standalone
    return {"project": project, "run": run, "other": other, "source": source, "evidence": evidence,
            "result": result, "claim": claim}


def ids(rows: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [r["id"] for r in rows]


def test_every_filter_returns_the_record_and_its_children(ledger: Ledger, world: dict) -> None:  # type: ignore[type-arg]
    run, project = world["run"], world["project"]
    by_run = ledger.query(run_id=run["id"])
    assert (ids(by_run["runs"]), ids(by_run["results"]), ids(by_run["claims"])) == (
        [run["id"]], [world["result"]["id"]], [world["claim"]["id"]])
    by_question = ledger.query(question_id=run["question_id"])
    assert ids(by_question["questions"]) == [run["question_id"]]
    assert ids(by_question["hypotheses"]) == [run["hypothesis_id"]]
    assert ids(by_question["evidence"]) == [world["evidence"]["id"]]
    assert sorted(ids(by_question["runs"])) == sorted([run["id"], world["other"]["id"]])
    by_project = ledger.query(project_id=project["id"])
    assert ids(by_project["projects"]) == [project["id"]] and ids(by_project["questions"]) == [run["question_id"]]
    assert ids(by_project["sources"]) == [world["source"]["id"]]
    by_hypothesis = ledger.query(hypothesis_id=run["hypothesis_id"])
    assert ids(by_hypothesis["experiments"]) == [run["experiment_id"]]
    by_experiment = ledger.query(experiment_id=run["experiment_id"])
    assert sorted(ids(by_experiment["runs"])) == sorted([run["id"], world["other"]["id"]])
    by_source = ledger.query(source_id=world["source"]["id"])
    assert ids(by_source["sources"]) == [world["source"]["id"]]
    assert ids(by_source["evidence"]) == [world["evidence"]["id"]]
    assert len(ledger.query(skill="deep-research")["runs"]) == 2
    assert ids(ledger.query(skill="bibliography_agent")["runs"]) == [world["other"]["id"]]
    assert len(ledger.query(since="2000-01-01")["runs"]) == 3
    assert ledger.query(since="2999-01-01T00:00:00+02:00")["runs"] == []
    assert ledger.query(run_id="run_nope") == {"runs": [], "results": [], "claims": []}
    hypothesis = by_hypothesis["hypotheses"][0]
    assert hypothesis["synthetic"] is True and set(hypothesis) == {
        "id", "question_id", "statement", "status", "synthetic", "created_at", "created_by"}


@pytest.mark.parametrize("filters", [{}, {"run_id": "a", "skill": "b"}, {"since": "yesterday"}])
def test_query_wants_exactly_one_good_filter(ledger: Ledger, filters: dict[str, str]) -> None:
    with pytest.raises(StatedirError) as refused:
        ledger.query(**filters)
    assert refused.value.code == "INVALID_VALUE"


def test_the_index_lives_in_the_git_dir_and_heals_when_deleted_or_corrupt(
        ledger: Ledger, store: Path, world: dict) -> None:  # type: ignore[type-arg]
    index = path_of(ledger.store)
    assert index.is_file() and str(index).startswith(str(store.parent / ".git"))
    expected = ledger.query(run_id=world["run"]["id"])
    index.unlink()
    assert ledger.query(run_id=world["run"]["id"]) == expected
    index.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    assert ledger.query(run_id=world["run"]["id"]) == expected
    with sqlite3.connect(index) as conn:  # an index of another format is rebuilt, not migrated
        conn.execute("PRAGMA user_version = 99")
    assert ledger.query(run_id=world["run"]["id"]) == expected
    assert ledger.rebuild_index(full=True)["rebuilt"] == "full"
    assert ledger.rebuild_index()["rebuilt"] == "incremental"


def test_writes_update_the_index_and_foreign_commits_are_caught_up(ledger: Ledger, store: Path) -> None:
    run = ledger.start_run("s")
    ledger.query(run_id=run["id"])
    ledger.record_result(run["id"], "written by statedir")
    assert len(ledger.query(run_id=run["id"])["results"]) == 1
    # A commit statedir did not make (a pull, a merge, a hand edit): the next query reads the
    # files git says changed since the commit the index reflects.
    path = store / "research" / "runs" / f"{run['id']}.yaml"
    path.write_text(path.read_text().replace("skill: s", "skill: renamed"))
    git(store.parent, "commit", "-qam", "hand edit")
    assert ledger.query(skill="renamed")["runs"][0]["id"] == run["id"]
    git(store.parent, "rm", "-q", str(path))
    git(store.parent, "commit", "-qm", "hand delete")
    assert ledger.query(run_id=run["id"])["runs"] == []
    # History rewritten under the index: it reads everything again.
    git(store.parent, "reset", "-q", "--hard", "HEAD~2")
    subprocess.run(["git", "reflog", "expire", "--expire=now", "--all"], cwd=store.parent, check=True)
    subprocess.run(["git", "gc", "-q", "--prune=now"], cwd=store.parent, check=True)
    assert ledger.query(skill="s")["runs"][0]["id"] == run["id"]


def test_validate_reports_a_dangling_reference_left_by_a_hand_edit(ledger: Ledger, store: Path) -> None:
    assert ledger.validate() == {"violations": [], "clean": True}
    run = ledger.start_run("s", question_text="Q?")
    ledger.record_claim(run["id"], "C")
    (store / "research" / "hypotheses" / f"{run['hypothesis_id']}.yaml").unlink()
    before = snapshot(store.parent)
    report = ledger.validate()
    assert report["clean"] is False
    assert report["violations"] == [
        {"entity": "experiment", "id": run["experiment_id"], "field": "hypothesis_id",
         "missing_id": run["hypothesis_id"]},
        {"entity": "run", "id": run["id"], "field": "hypothesis_id", "missing_id": run["hypothesis_id"]},
    ]
    assert snapshot(store.parent) == before  # repairs nothing


def test_a_schema_version_mismatch_is_refused_loudly(ledger: Ledger, store: Path) -> None:
    from statedir.engine import validate

    run = ledger.start_run("s", question_text="Q?")
    path = store / "research" / "questions" / f"{run['question_id']}.yaml"
    path.write_text(path.read_text().replace("schema_version: 1", "schema_version: 2"))
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=store.parent, check=True)  # what the index reads
    before = snapshot(store.parent)
    for call in (lambda: ledger.answer_question(run["question_id"]),
                 lambda: ledger.create_hypothesis(run["question_id"], "H"),
                 lambda: ledger.rebuild_index(full=True),
                 lambda: ledger.validate()):
        with pytest.raises(StatedirError) as refused:
            call()
        assert refused.value.code == "SCHEMA_VERSION_MISMATCH" and refused.value.exit_code == 3
        assert "schema_version 2" in refused.value.message and run["question_id"] in refused.value.message
    assert snapshot(store.parent) == before
    assert any(p.path == "$.schema_version" for p in validate.store(store))
    # A file without the field was written as version 1 (the seed's rule).
    path.write_text(path.read_text().replace("schema_version: 2\n", ""))
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=store.parent, check=True)  # statedir commits only its own
    assert ledger.answer_question(run["question_id"])["status"] == "answered"


def test_a_hand_edited_file_keeps_its_comments_through_a_status_change(ledger: Ledger, store: Path) -> None:
    run = ledger.start_run("s", question_text="Q?")
    path = store / "research" / "questions" / f"{run['question_id']}.yaml"
    assert "\norigin_skill: s\n" in path.read_text()
    path.write_text(path.read_text().replace("\norigin_skill: s\n", "\norigin_skill: s  # reworded by hand\n"))
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=store.parent, check=True)  # statedir commits only its own
    ledger.answer_question(run["question_id"])
    text = path.read_text()
    assert "# reworded by hand" in text and "status: answered" in text


def test_a_symlinked_folder_is_never_followed(ledger: Ledger, store: Path, tmp_path: Path) -> None:
    """A query answers from the commit (the work tree's link is never read); a write refuses it."""
    run = ledger.start_run("s")
    outside = tmp_path / "outside"
    (store / "research" / "runs").rename(outside)
    (store / "research" / "runs").symlink_to(outside)
    (outside / f"{run['id']}.yaml").write_text("not what HEAD holds")
    path_of(ledger.store).unlink(missing_ok=True)
    assert ledger.query(run_id=run["id"])["runs"][0]["skill"] == "s"
    with pytest.raises(StatedirError) as refused:
        ledger.complete_run(run["id"], "completed")
    assert refused.value.code == "CORRUPT_STORE"


def test_a_damaged_page_inside_the_index_is_rebuilt(ledger: Ledger, store: Path, world: dict) -> None:  # type: ignore[type-arg]
    expected = ledger.query(question_id=world["run"]["question_id"])
    index = path_of(ledger.store)
    data = bytearray(index.read_bytes())
    assert len(data) > 8192
    data[4096:len(data)] = b"\xa5" * (len(data) - 4096)  # every page after the first: torn
    index.write_bytes(bytes(data))
    assert ledger.query(question_id=world["run"]["question_id"]) == expected
    again = ledger.create_source("T", project_id=world["project"]["id"])  # same title, author, year
    assert again["duplicate_hint"] == {"source_id": world["source"]["id"], "reason": "title+author+year match"}


def test_head_is_read_from_packed_refs_after_gc(ledger: Ledger, store: Path) -> None:
    from statedir.gitops import git as git_mod

    run = ledger.start_run("s")
    git(store.parent, "pack-refs", "--all")
    assert not (store.parent / ".git" / "refs" / "heads" / "main").exists()
    assert git_mod.head(store.parent) == git(store.parent, "rev-parse", "HEAD") == run["commit"]
    assert ledger.query(run_id=run["id"])["runs"][0]["id"] == run["id"]
    later = ledger.record_claim(run["id"], "C")  # a commit on a packed branch writes a loose ref again
    assert git_mod.head(store.parent) == later["commit"]


# --- the index answers what a commit holds, and nothing else -------------------------------------------
@pytest.mark.slow  # a second checkout of the repository
def test_a_file_no_commit_holds_is_never_answered(repo: Path) -> None:
    """A reset --soft leaves the work tree ahead of HEAD; a reset --hard then removes the file.
    The index reads blobs of the commits it reflects, so no query, no dedup hint and no
    validate ever sees the Source that exists in no commit and no file."""
    assert cli("init", "state", cwd=repo).returncode == 0
    store = repo / "state"
    assert research("--create-source", "--title", "Paper", "--authors", "Ann", "--year", "2020", cwd=store)[0] == 0
    code, phantom = research("--create-source", "--title", "Other", "--authors", "Bob", "--year", "2021", cwd=store)
    assert code == 0
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    assert research("--query", "--source-id", phantom["id"], cwd=store)[1]["sources"] == []
    git(repo, "reset", "-q", "--hard")
    assert research("--query", "--source-id", phantom["id"], cwd=store)[1]["sources"] == []
    code, again = research("--create-source", "--title", "Other", "--authors", "Bob", "--year", "2021", cwd=store)
    assert code == 0 and again["duplicate_hint"] is None
    assert research("--validate", cwd=store)[1] == {"violations": [], "clean": True}


@pytest.mark.slow  # a second checkout of the repository
def test_a_read_only_checkout_answers_from_its_files(repo: Path) -> None:
    """Nothing can be written there: not the index's folder, not a stale index, not a damaged
    one. Queries answer from HEAD's files all the same, and no index is thrown away."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs a mount namespace for a read-only bind mount")
    assert cli("init", "state", cwd=repo).returncode == 0
    store = repo / "state"
    code, run = research("--start-run", "--skill", "s", "--question", "Q?", cwd=store)
    assert code == 0

    def read_only(*args: str) -> tuple[int, Any]:
        script = f'mount --bind -o ro "{repo}" "{repo}" && exec "$@"'
        proc = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", sys.executable, "-P", "-m", "statedir",
                               "research", *args, "--json"], cwd=store, capture_output=True, text=True)
        assert proc.stderr == "", proc.stderr  # never a traceback
        return proc.returncode, json.loads(proc.stdout)

    assert research("--query", "--run-id", run["id"], cwd=store)[0] == 0  # the index is made
    index = next((repo / ".git" / "statedir").glob("research-*.sqlite"))
    git(repo, "commit", "-q", "--allow-empty", "-m", "not indexed yet")  # the index is now behind HEAD
    for state in ("stale", "damaged", "missing"):
        if state == "damaged":
            index.write_bytes(b"not a database" * 500)
        kept = index.read_bytes() if index.exists() else None
        code, found = read_only("--query", "--question-id", run["question_id"])
        assert code == 0 and [r["id"] for r in found["runs"]] == [run["id"]], (state, found)
        assert (index.read_bytes() if index.exists() else None) == kept, state  # never thrown away here
        index.unlink(missing_ok=True)

"""The written shape of a run's files: a field at a default that says nothing is not written, a
stage with nothing to say has no file, the adjudication rows not applicable are left out; every
reader sees the whole record, and stores of the older shape read, validate and verify."""
from __future__ import annotations

import subprocess
from pathlib import Path

from statedir import api
from statedir.engine import adjudication_contract, runs, template
from statedir.files import yaml
from statedir.merge import driver
from statedir.store import layout
from tests.support.util import FIXTURES, cli, cli_json

RUN = "r1"
OLD = FIXTURES / "store-3.22.bundle"
FULL = FIXTURES / "store-full.bundle"  # make-store-full.sh


def test_a_new_run_writes_its_state_and_first_log_alone(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    run = repo / "state" / "runs" / RUN
    assert sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()) == [
        f"history/transitions/{p.name}" for p in (run / "history" / "transitions").iterdir()] + ["state.yaml"]
    text = (run / "state.yaml").read_text()
    assert "null" not in text and "pending_adjudication_activity_bindings" not in text and "loop_count" not in text
    t = template.load("academic-pipeline")
    doc = sd.show(RUN)
    assert doc["stages"] == {sid: runs.new_stage(t, sid) for sid in t.stage_ids}  # read as it starts
    assert doc["paused_from"] is None and doc["checkpoint"] is None and doc["loop_count"] == 0
    assert doc["team"] == dict.fromkeys(t.doc["team"])
    assert doc["pending_adjudication_activity_bindings"] == adjudication_contract.initial_rows()
    assert cli_json("get", RUN, "stages.2.5.status", cwd=repo)[1] == "pending"
    assert cli("validate", cwd=repo).returncode == 0


def test_a_stage_file_is_written_when_the_stage_first_has_something_to_say(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    sd.stage(RUN, "1", "in_progress", mode="socratic")
    stages = repo / "state" / "runs" / RUN / "stages"
    assert [p.name for p in stages.iterdir()] == ["1.yaml"]
    record = yaml.to_plain(yaml.load((stages / "1.yaml").read_bytes()))
    assert list(record) == ["id", "name", "skill", "status", "mode", "started_at"]  # the template's order
    shown = sd.show(RUN)["stages"]["1"]
    assert shown["outputs"] == [] and shown["completed_at"] is None and shown["mode"] == "socratic"
    sd.set(RUN, "stages.1.team_notes", "a note", reason="r")
    sd.set(RUN, "stages.1.team_notes", "", reason="cleared")  # back to its default: left out again
    assert "team_notes" not in (stages / "1.yaml").read_text()
    ars = sd.show(RUN, format="ars")
    assert set(ars["stages"]["2.5"]) == set(runs.new_stage(template.load("academic-pipeline"), "2.5")) - {"id"}
    assert len(ars["pending_adjudication_activity_bindings"]) == 5
    assert cli_json("verify", cwd=repo)[1]["clean"]  # type: ignore[index]


def test_a_bound_row_is_written_alone_and_read_with_the_other_four(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    sd.bind(RUN, "compliance_report", unavailable="source_not_provided")
    written = yaml.to_plain(yaml.load((repo / "state" / "runs" / RUN / "state.yaml").read_bytes()))
    assert [r["source_family"] for r in written["pending_adjudication_activity_bindings"]] == ["compliance_report"]
    rows = sd.get(RUN, "pending_adjudication_activity_bindings")
    assert [r["source_family"] for r in rows] == list(adjudication_contract.FAMILY_NAMES)
    assert not adjudication_contract.rows_problems(rows, sealed=False)
    sd.bind(RUN, "compliance_report", not_applicable=True)  # as it started: the key goes again
    assert "pending_adjudication" not in (repo / "state" / "runs" / RUN / "state.yaml").read_text()
    assert cli_json("verify", cwd=repo)[1]["clean"]  # type: ignore[index]


def test_a_store_of_the_older_shape_reads_validates_and_verifies(isolated: Path) -> None:
    """store-3.22.bundle holds runs in the older shape (every field, every stage file, five rows):
    its history replays clean, and a run moving on now writes the files it touches in the new one."""
    repo = isolated / "old"
    subprocess.run(["git", "clone", "-q", str(OLD), str(repo)], check=True)
    run = repo / "state" / "runs" / "q3"
    assert len(list((run / "stages").glob("*.yaml"))) == 10
    before = (run / "state.yaml").read_text()
    assert "paused_from: null" in before and before.count("capture_state: not_applicable") == 5
    shown = cli_json("show", "q3", cwd=repo)[1]
    assert cli("validate", cwd=repo).returncode == 0
    assert cli("stage", "q3", "2.5", "in_progress", cwd=repo).returncode == 0
    after = (run / "state.yaml").read_text()
    assert "null" not in after and "capture_state" not in after
    assert "null" not in (run / "stages" / "2.5.yaml").read_text()
    assert "decision: null" in (run / "stages" / "3.yaml").read_text()  # untouched: as it was
    now = cli_json("show", "q3", cwd=repo)[1]
    for key in ("paused_from", "team", "pending_adjudication_activity_bindings", "loop_count", "checkpoint"):
        assert now[key] == shown[key], key  # type: ignore[index]
    assert now["stages"]["3"] == shown["stages"]["3"]  # type: ignore[index]
    assert cli("validate", cwd=repo).returncode == 0
    code, out = cli_json("verify", cwd=repo)
    assert code == 0 and out["clean"], out  # type: ignore[index]


def test_the_merge_driver_merges_a_stage_across_the_two_shapes(sd: api.StateDir, repo: Path) -> None:
    """An older-shape file on the base, the new shape on one side: a field left out is its default."""
    sd.new(RUN, topic="t")
    t = template.load("academic-pipeline")
    rel = f"runs/{RUN}/stages/1.yaml"
    ref = layout.schema_ref(rel, "academic-pipeline/3.24")
    full = runs.new_stage(t, "1")
    base = yaml.dump({**full, "status": "in_progress", "started_at": "2026-01-01T00:00:00Z"}, ref).encode()
    ours = yaml.dump({"id": "1", "name": full["name"], "skill": full["skill"], "status": "in_progress",
                      "started_at": "2026-01-01T00:00:00Z", "team_notes": "ours"}, ref).encode()
    theirs = yaml.dump({**full, "status": "in_progress", "started_at": "2026-01-01T00:00:00Z",
                        "mode": "socratic"}, ref).encode()
    outcome = driver.merge_file(rel, base, ours, theirs, repo / "state")
    assert outcome.clean, outcome
    merged = yaml.to_plain(yaml.load(outcome.data))
    assert merged["mode"] == "socratic" and merged["team_notes"] == "ours" and "completed_at" not in merged
    made_twice = driver.merge_file(rel, None, ours, ours.replace(b"ours", b"ours"), repo / "state")
    assert made_twice.clean


def test_a_sealed_store_of_the_older_shape_verifies_and_exports_as_before(isolated: Path) -> None:
    """store-full.bundle (tests/fixtures/make-store-full.sh): statedir as it landed, before the
    written shape, a completed run bound and sealed, a new run with ten stage files and five rows.
    It verifies clean; the export and seal read as they did; runs moving on now verify too."""
    repo = isolated / "full"
    subprocess.run(["git", "clone", "-q", str(FULL), str(repo)], check=True)
    runs_dir = repo / "state" / "runs"
    assert len(list((runs_dir / "s2" / "stages").glob("*.yaml"))) == 10
    assert (runs_dir / "s2" / "state.yaml").read_text().count("capture_state: not_applicable") == 5
    code, out = cli_json("verify", cwd=repo)
    assert code == 0 and out["clean"], out  # type: ignore[index]
    ars = cli_json("show", "s1", "--format", "ars", cwd=repo)[1]
    assert len(ars["pending_adjudication_activity_bindings"]) == 5  # type: ignore[index]
    assert len(ars["adjudication_activity_sources"]) == 5  # type: ignore[index]
    code, again = cli_json("seal", "s1", "--artifact-root", str(repo), cwd=repo)
    assert code == 0 and again["changed"] is False, again  # type: ignore[index]
    shown = cli_json("show", "s2", cwd=repo)[1]
    assert cli("stage", "s2", "1", "in_progress", cwd=repo).returncode == 0
    assert cli("new", "s3", "--topic", "a run of the new shape", cwd=repo).returncode == 0
    assert not (runs_dir / "s3" / "stages").exists()
    now = cli_json("show", "s2", cwd=repo)[1]
    assert now["stages"]["2"] == shown["stages"]["2"]  # type: ignore[index]
    rows = "pending_adjudication_activity_bindings"
    assert now[rows] == shown[rows]  # type: ignore[index]
    assert cli_json("show", "s1", "--format", "ars", cwd=repo)[1] == ars
    assert cli("validate", cwd=repo).returncode == 0
    code, out = cli_json("verify", cwd=repo)
    assert code == 0 and out["clean"], out  # type: ignore[index]

"""Every accepted transition survives a merge, and the merge takes what the rules allow: the
issue's cases through the real CLI, with real clones of one bare remote. A stopped clock
(tests/support/clock) makes "the same second" certain."""
from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from statedir.files import yaml
from tests.support.sync import clean, entries, git, network, ok, ok_at, second, store_files
from tests.support.util import cli

# Slow: a network of clones of one remote, each test several CLI syncs (fetch, merge driver,
# validate, verify, push): 1-6 CPU-s a test.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated")]  # each test drives real clones

STAGE_ONE = ("rq_brief", "methodology_blueprint", "bibliography", "synthesis_report")


def _converge(c: dict[str, Path], order: tuple[str, ...]) -> None:
    for name in order:
        ok(c[name], "sync")
    files = store_files(c[order[-1]])
    for name, clone in c.items():
        assert store_files(clone) == files, name
        clean(clone)


def _doc(clone: Path, rel: str) -> dict:
    return yaml.to_plain(yaml.load((clone / "state" / rel).read_bytes(), rel))


def _request_ids(clone: Path, rev_range: str) -> list[str]:
    out = git(clone, "log", "--format=%(trailers:key=Statedir-Request-Id,valueonly)", rev_range)
    return [line for line in out.split("\n") if line]


def test_the_same_transition_in_the_same_second_on_two_machines_stays_two(tmp_path: Path) -> None:
    """pipeline paused, material and confirm, each made alike on two machines in one second by
    one committer: two commits and two log entries each, each version its own label."""
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "stage", "r1", "1", "in_progress")
    ok(c["a"], "material", "r1", *STAGE_ONE)
    ok(c["a"], "stage", "r1", "1", "completed")
    _converge(c, ("a", "b"))
    base = git(c["a"], "rev-parse", "HEAD")
    when = second()
    made = {}
    for name in ("a", "b"):
        made[name] = [ok_at(when, c[name], "confirm", "r1", "--response", "continue")["commit"],
                      ok_at(when, c[name], "material", "r1", "paper_draft")["commit"],
                      ok_at(when, c[name], "pipeline", "r1", "paused")["commit"]]
    assert made["a"] != made["b"]  # before: byte-identical commits, which git keeps as one
    _converge(c, ("a", "b", "a"))
    head = git(c["a"], "rev-parse", "HEAD")
    for sha in made["a"] + made["b"]:
        assert subprocess.run(["git", "merge-base", "--is-ancestor", sha, head], cwd=c["a"]).returncode == 0
    mine = [e for e in entries(c["a"], "r1") if e["at"] == when]
    assert Counter(e["action"] for e in mine) == {"confirm": 2, "material": 2, "pipeline": 2}
    assert len({e["request_id"] for e in mine}) == 6
    assert {e["request_id"] for e in mine} <= set(_request_ids(c["a"], f"{base}..HEAD"))
    answered = [e for e in entries(c["a"], "r1", "checkpoints") if e["event"] == "answered"]
    assert len(answered) == 2
    state = _doc(c["a"], "runs/r1/state.yaml")
    # counters: two registrations are two versions; one checkpoint (stage 1's), opened once and
    # answered on both machines, is one checkpoint
    assert state["version_counters"]["paper_draft"] == 2 and state["current_version"]["paper_draft"] == "paper_draft_v2"
    assert state["checkpoints_opened"] == 1 and state["pipeline_state"] == "paused"
    drafts = [_doc(c["a"], f"runs/r1/materials/paper_draft_v{n}.yaml") for n in (1, 2)]
    assert len({d["request_id"] for d in drafts}) == 2
    assert [d["request_id"] for d in drafts] == sorted(d["request_id"] for d in drafts)  # the earlier keeps v1


def test_four_pipeline_moves_in_one_second_on_one_machine_keep_their_order(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    when = second()
    moves = ("paused", "running", "paused", "running")
    for state in moves:
        ok_at(when, c["a"], "pipeline", "r1", state)
    written = [e["summary"] for e in entries(c["a"], "r1") if e["action"] == "pipeline"]
    assert len(written) == 4 and written[0] == written[2] and written[1] == written[3]
    ok_at(when, c["b"], "set", "r1", "language", "de", "--reason", "from b")  # the same log segment
    _converge(c, ("a", "b", "a"))
    for clone in c.values():
        assert [e["summary"] for e in entries(clone, "r1") if e["action"] == "pipeline"] == written
    assert git(c["a"], "log", "--format=%s", "--grep", "^pipeline ").count("\n") + 1 == 4


def test_the_same_stage_move_on_two_machines_a_second_apart_merges(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    t0, t1, t2, t3 = (second(n) for n in range(4))
    ok_at(t1, c["a"], "stage", "r1", "1", "in_progress")
    ok_at(t0, c["b"], "stage", "r1", "1", "in_progress")
    _converge(c, ("a", "b", "a"))
    assert _doc(c["a"], "runs/r1/stages/1.yaml")["started_at"] == t0  # the earlier start
    ok(c["a"], "material", "r1", *STAGE_ONE)
    _converge(c, ("a", "b"))
    ok_at(t3, c["a"], "stage", "r1", "1", "completed")
    ok_at(t2, c["b"], "stage", "r1", "1", "completed")
    _converge(c, ("b", "a", "b"))
    stage = _doc(c["b"], "runs/r1/stages/1.yaml")
    state = _doc(c["b"], "runs/r1/state.yaml")
    assert stage["status"] == "completed" and stage["started_at"] == t0 and stage["completed_at"] == t3
    assert state["checkpoint"]["opened_at"] == t3 and state["pipeline_state"] == "awaiting_confirmation"
    assert state["checkpoints_opened"] == 1  # one checkpoint, stage 1's
    assert Counter(e["summary"] for e in entries(c["b"], "r1") if e["action"] == "stage") == {
        "stage 1 in_progress": 2, "stage 1 completed": 2}


def test_appends_to_one_bus_list_on_two_machines_merge(tmp_path: Path) -> None:
    session = "2026-06-30-convergence"
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "bus", "init", session)
    _converge(c, ("a", "b"))
    for name in ("a", "b"):
        ok(c[name], "bus", "append", session, "phases.1-design.evidence", f".ai_log/{name}1.md")
        ok(c[name], "bus", "append", session, "phases.1-design.evidence", f".ai_log/{name}2.md")
        ok(c[name], "bus", "append", session, "notes", f"from {name}")
    ok(c["b"], "bus", "append", session, "phases.1-design.evidence", ".ai_log/a1.md")  # on both: kept once
    _converge(c, ("a", "b", "a"))
    for clone in c.values():
        evidence = json.loads(cli("bus", "get", session, "phases.1-design.evidence", "--json", cwd=clone).stdout)
        assert sorted(evidence) == [".ai_log/a1.md", ".ai_log/a2.md", ".ai_log/b1.md", ".ai_log/b2.md"]
        assert evidence.index(".ai_log/a1.md") < evidence.index(".ai_log/a2.md")  # each side's order kept
        assert evidence.index(".ai_log/b1.md") < evidence.index(".ai_log/b2.md")
        notes = json.loads(cli("bus", "get", session, "notes", "--json", cwd=clone).stdout)
        assert sorted(notes) == ["from a", "from b"]
    # two different values of one field are still refused, naming it
    ok(c["a"], "bus", "set", session, "phases.1-design.agent", "agent-a")
    ok(c["a"], "sync")
    ok(c["b"], "bus", "set", session, "phases.1-design.agent", "agent-b")
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "MERGE_REFUSED"
    [conflict] = json.loads(proc.stdout)["error"]["details"]["conflicts"]
    assert [f["field"] for f in conflict["fields"]] == ["phases.1-design.agent"]


def test_a_material_registered_on_both_machines_becomes_two_versions(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b", "c"))
    for name in c:
        (c[name] / f"{name}.md").write_text(f"the draft of {name}\n")
    ok_at(second(0), c["a"], "material", "r1", "rq_brief", "--file", "a.md")
    ok_at(second(1), c["b"], "material", "r1", "rq_brief", "--file", "b.md")
    ok_at(second(2), c["c"], "material", "r1", "rq_brief", "--file", "c.md")
    ok(c["a"], "sync")
    merged = ok(c["b"], "sync")
    assert merged["status"] == "merged"
    # a plain git pull cannot rename a file: the driver refuses the passport and names sync
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-edit"], cwd=c["c"], capture_output=True, text=True)
    assert pull.returncode != 0 and "statedir sync" in (c["c"] / "state/runs/r1/materials/research_v1.yaml").read_text()
    git(c["c"], "merge", "--abort")
    _converge(c, ("c", "a", "b"))
    state = _doc(c["a"], "runs/r1/state.yaml")
    assert state["version_counters"]["research"] == 3 and state["current_version"]["research"] == "research_v3"
    versions = json.loads(cli("versions", "r1", "research", "--json", cwd=c["a"]).stdout)
    assert [v["version_label"] for v in versions] == ["research_v1", "research_v2", "research_v3"]
    hashes = [v["passport"]["content_hash"] for v in versions]
    assert len(set(hashes)) == 3  # no label names two contents
    files = [v["passport"]["files"][0]["path"] for v in versions]
    assert files == ["a.md", "b.md", "c.md"]  # numbered in the order they were registered
    registered = [e for e in entries(c["a"], "r1") if e["action"] == "material"]
    assert {e["request_id"] for e in registered} == {v["passport"]["request_id"] for v in versions}


def test_checkpoints_opened_counts_each_opening_once_after_both_machines_opened_one(tmp_path: Path) -> None:
    """Both machines open stage 1's checkpoint: one opening of the run, made twice (both log
    entries kept); the next checkpoint after the merge is the run's second, not its third."""
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "stage", "r1", "1", "in_progress")
    ok(c["a"], "material", "r1", *STAGE_ONE)
    _converge(c, ("a", "b"))
    ok(c["a"], "stage", "r1", "1", "completed")
    ok(c["b"], "stage", "r1", "1", "completed")
    _converge(c, ("a", "b", "a"))
    assert _doc(c["a"], "runs/r1/state.yaml")["checkpoints_opened"] == 1
    ok(c["b"], "confirm", "r1", "--response", "continue")
    ok(c["b"], "stage", "r1", "2", "completed")
    _converge(c, ("b", "a"))
    state = _doc(c["a"], "runs/r1/state.yaml")
    opened = [e["stage"] for e in entries(c["a"], "r1", "checkpoints") if e["event"] == "opened"]
    assert sorted(opened) == ["1", "1", "2"]  # every machine's record kept
    assert state["checkpoints_opened"] == 2 and state["checkpoint"]["stage"] == "2"

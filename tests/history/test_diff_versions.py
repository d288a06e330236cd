"""diff (a semantic diff of the show document) and versions (every version of a material)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir import api
from statedir.history import diff
from tests.support.history import drive, git, other_commits, packed_without_graph
from tests.support.util import cli, cli_json, snapshot


def pack_reads(repo: Path, *args: str) -> tuple[int, str]:
    """(objects git read from its packs, stdout) for one CLI call: every object packed first and
    the commit-graph removed, so each commit a walk visits is a read."""
    packed_without_graph(repo)
    trace = repo.parent / "pack-access.txt"
    trace.unlink(missing_ok=True)
    proc = cli(*args, cwd=repo, env={"GIT_TRACE_PACK_ACCESS": str(trace)})
    assert proc.returncode == 0, proc.stderr
    return len(trace.read_text().splitlines()) if trace.exists() else 0, proc.stdout


def test_diff_between_two_commits_in_dotted_paths(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 12)
    before = snapshot(repo)
    code, out = cli_json("diff", "p1", seen[10][0], seen[11][0], cwd=repo)  # stage 2.5 completed
    assert code == 0 and out["run_id"] == "p1" and (out["from"], out["to"]) == (seen[10][0], seen[11][0])
    rows = {r["path"]: (r["from"], r["to"]) for r in out["changes"]}
    assert rows["stages.2.5.status"] == ("in_progress", "completed")
    assert rows["pipeline_state"] == ("running", "awaiting_confirmation")
    assert rows["stages.2.5.checkpoint_type"] == (None, "MANDATORY")
    added = [r for r in out["changes"] if r["path"].startswith("history.transitions.")]
    assert len(added) == 1 and added[0]["from"] is None and added[0]["to"]["summary"] == "stage 2.5 completed"
    assert all(set(r) == {"path", "from", "to", "change"} for r in out["changes"])
    assert snapshot(repo) == before


@pytest.mark.slow  # drives a run through a dozen transitions first, each a commit
def test_diff_to_now_and_for_people(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 6)
    result = sd.diff("p1", seen[4][0])
    assert result["to"] is None
    assert {"path": "current_version.paper_draft", "from": None, "to": "paper_draft_v1", "change": "added"} \
        in result["changes"]
    text = cli("diff", "p1", seen[4][0], cwd=repo).stdout
    assert text.startswith(f"run p1: {seen[4][0][:10]} -> now,")
    assert '+ current_version.paper_draft: "paper_draft_v1"' in text
    assert sd.diff("p1", "HEAD")["changes"] == []
    assert cli_json("diff", "p1", "HEAD", "HEAD", cwd=repo)[1]["changes"] == []


def test_records_are_matched_by_their_id() -> None:
    old = {"rows": [{"source_family": "a", "n": 1}, {"source_family": "b", "n": 2}], "log": [{"x": 1}]}
    new = {"rows": [{"source_family": "b", "n": 3}, {"source_family": "a", "n": 1}], "log": [{"x": 1}, {"x": 2}]}
    assert diff.changes(old, new) == [
        {"path": "log.1", "from": None, "to": {"x": 2}, "change": "added"},
        {"path": "rows.b.n", "from": 2, "to": 3, "change": "changed"}]


def test_diff_bad_input(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 2)
    for args, code in [(["p1", "nope"], "INVALID_VALUE"), (["p9", "HEAD"], "UNKNOWN_RUN"), (["p1"], "INVALID_VALUE")]:
        status, out = cli_json("diff", *args, cwd=repo)
        assert status == 2 and out["error"]["code"] == code, args


def test_versions_of_a_material_or_its_series(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 12)
    code, out = cli_json("versions", "p1", "paper_draft", cwd=repo)
    assert code == 0
    assert [(v["version_label"], v["commit"]) for v in out] == [("paper_draft_v1", seen[5][0]),
                                                               ("paper_draft_v2", seen[9][0])]
    assert out[0]["passport"]["content_hash"] == out[1]["passport"]["content_hash"]  # the same file, twice
    assert out[1]["passport"]["verification_status"] == "VERIFIED"
    research = sd.versions("p1", "research")  # a series name
    assert [v["version_label"] for v in research] == ["research_v1"]
    assert sd.versions("p1", "bibliography") == research  # a material of that bundle
    sd.material("p1", ["synthesis_report"], files=[str(repo / "draft.md")])  # research_v2: no bibliography
    assert [v["version_label"] for v in sd.versions("p1", "research")] == ["research_v1", "research_v2"]
    assert [v["version_label"] for v in sd.versions("p1", "bibliography")] == ["research_v1"]  # those holding it
    text = cli("versions", "p1", "paper_draft", cwd=repo).stdout
    assert "paper_draft_v1" in text and seen[5][0][:10] in text
    status, err = cli_json("versions", "p1", "no_such", cwd=repo)
    assert status == 2 and err["error"]["code"] == "UNKNOWN_MATERIAL"


def test_versions_reads_the_runs_listing_not_the_history(sd: api.StateDir, repo: Path) -> None:
    draft = repo / "draft.md"
    drive(sd, draft, 6)  # up to paper_draft_v1
    other_commits(repo, 400)
    _, first = pack_reads(repo, "versions", "p1", "paper_draft", "--json")  # the listing remembered (a walk)
    sd.material("p1", ["paper_draft"], files=[str(draft)], upstream=["research_v1"])
    sd.set("p1", "topic", "after", reason="t")
    reads, out = pack_reads(repo, "versions", "p1", "paper_draft", "--json")
    assert [v["version_label"] for v in json.loads(out)] == ["paper_draft_v1", "paper_draft_v2"]
    assert json.loads(out)[1]["commit"] == git(repo, "rev-parse", "HEAD~1").strip()
    for listing in sd.store.cache_dir.glob("paths/*.json"):
        listing.unlink()
    walked, again = pack_reads(repo, "versions", "p1", "paper_draft", "--json")
    assert again == out and json.loads(first) == json.loads(out)[:1]
    assert walked >= 400 and reads <= 200, (reads, walked)  # the new commits and the run's own, not the 400
    none, _ = pack_reads(repo, "versions", "p1", "revised_draft", "--json")  # no version yet: no history read
    assert none < reads

"""log: every commit that touched the store, statedir's or not, filtered, in one git process."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir import api
from tests.support.history import INTEGRITY, drive, git, hand_commit
from tests.support.util import cli, cli_json


def git_commands(trace: Path) -> list[str]:
    return [e["name"] for e in map(json.loads, trace.read_text().splitlines()) if e["event"] == "cmd_name"]


def test_filters_through_the_cli(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 11)
    code, everything = cli_json("log", "p1", cwd=repo)
    assert code == 0 and len(everything) == 12  # step 11 is the PASS and its checklist
    code, out = cli_json("log", "--actor", INTEGRITY, cwd=repo)
    assert [e["summary"].split(" (")[0] for e in out] == ["checklist 2.5: does not block", "integrity 2.5 PASS",
                                                          "integrity 2.5 FAIL"]
    code, out = cli_json("log", "p1", "--action", "material", "--limit", "2", cwd=repo)
    assert [e["summary"] for e in out] == ["material paper_draft -> paper_draft_v2",
                                           "material paper_draft -> paper_draft_v1"]
    code, out = cli_json("log", "p1", "--limit", "3", cwd=repo)
    assert out == everything[:3]
    assert cli_json("log", "--since", "2999-01-01", cwd=repo) == (0, [])
    code, out = cli_json("log", "--since", "1 week ago", cwd=repo)
    assert len(out) == 13  # the run's 12 and the store's init
    assert cli_json("log", "--since", "2020-01-01T00:00:00Z", "--action", "new", cwd=repo)[1][0]["action"] == "new"
    text = cli("log", "p1", "--action", "stage", cwd=repo).stdout
    assert "stage 1 completed  -- research is enough" in text


def test_reason_is_in_the_commit_body_and_the_log(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 3)
    sd.pipeline("p1", "paused", reason="waiting for the\nsupervisor")
    assert git(repo, "log", "-1", "--format=%b").startswith("waiting for the\nsupervisor\n\nStatedir-Run: p1\n")
    assert sd.log("p1", limit=1)[0]["reason"] == "waiting for the\nsupervisor"


def test_commits_without_statedir_are_listed_and_marked(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 3)
    state = repo / "state/runs/p1/state.yaml"
    state.write_text(state.read_text().replace("topic: AI and QA", "topic: by hand"))
    edit = hand_commit(repo, "fix the topic")
    git(repo, "revert", "--no-edit", "HEAD~1")
    revert = git(repo, "rev-parse", "HEAD").strip()
    entries = sd.log("p1")
    assert [(e["commit"], e["statedir"], e["action"], e["actor"], e["run_id"]) for e in entries[:2]] == [
        (revert, False, None, "Test User", "p1"), (edit, False, None, "Test User", "p1")]
    assert all(e["statedir"] for e in entries[2:])
    assert [e["commit"] for e in sd.log(actor="Test User")] == [revert, edit]
    assert "(not statedir)" in cli("log", "p1", "--limit", "1", cwd=repo).stdout


def test_two_git_processes_at_most_however_long_the_history(sd: api.StateDir, repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's commits (statedir.history.path_index: a walk the first time, then only the
    commits since, none where HEAD has not moved) and one process reading those commits;
    `--since` is one walk of git's."""
    drive(sd, repo / "draft.md", 11)
    cases: list[dict] = [{}, {"actor": INTEGRITY}, {"action": "stage", "limit": 1}, {"since": "1 day ago"}]
    for n, filters in enumerate(cases):
        trace = tmp_path / f"trace{n}.json"
        monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
        assert sd.log("p1", **filters)
        assert git_commands(trace) == (["log", "log"] if n == 0 else ["log"]), filters


def test_bad_filters_are_bad_input(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 1)
    for args in (["--limit", "0"], ["--limit", "x"], ["--since", "last tuesday-ish"]):
        code, out = cli_json("log", *args, cwd=repo)
        assert code == 2 and out["error"]["code"] == "INVALID_VALUE", args
    assert cli_json("log", "p9", cwd=repo)[1]["error"]["code"] == "UNKNOWN_RUN"
    assert cli_json("log", "../x", cwd=repo)[1]["error"]["code"] == "INVALID_ID"


@pytest.mark.slow  # drives a run through a dozen transitions first, each a commit
def test_pages_cover_the_log_once_whatever_is_committed_between_them(sd: api.StateDir, repo: Path) -> None:
    """A cursor names the commit the first page was read at and how many entries came before:
    every entry once, in order, with commits made between pages (and a merge's other side) unseen."""
    drive(sd, repo / "draft.md", 7)
    everything = sd.log()
    for filters in ({}, {"run_id": "p1"}, {"action": "stage"}, {"actor": INTEGRITY}):
        wanted = sd.log(**filters)
        page = sd.log_page(limit=2, **filters)
        seen = list(page["entries"])
        while page["next_cursor"] is not None:
            sd.set("p1", "topic", f"meanwhile {len(seen)}", reason="a write between pages")
            page = sd.log_page(cursor=page["next_cursor"], limit=2, **filters)
            seen += page["entries"]
        assert seen == wanted, filters
    assert sd.log_page(limit=len(everything))["next_cursor"] is not None  # the writes meanwhile
    last = sd.log_page(limit=1000)
    assert last["next_cursor"] is None and last["entries"] == sd.log()


@pytest.mark.slow  # drives a run through a dozen transitions first, each a commit
def test_a_cursor_the_log_did_not_give_is_bad_input_and_the_text_log_names_the_next(
        sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 3)
    head = git(repo, "rev-parse", "HEAD").strip()
    for cursor in ("HEAD", "HEAD~1.2", f"{head}", f"{head}.-1", "0" * 40 + ".1", f"{head}.1.2"):
        code, out = cli_json("log", "--cursor", cursor, cwd=repo)
        assert code == 2 and out["error"]["code"] == "INVALID_VALUE", cursor
    code, page = cli_json("log", "--cursor", f"{head}.1", "--limit", "1", cwd=repo)
    assert code == 0 and page["entries"] == sd.log()[1:2]
    text = cli("log", "--cursor", "start", "--limit", "2", cwd=repo).stdout
    assert f"more: --cursor {head}.2" in text

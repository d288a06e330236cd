"""The inquiry_ledger run setting: an append-only branch ledger (statedir inquiry), published from
its second branch on, summarized only at the Stage 1, 2.5 and 4.5 checkpoints, never a verdict."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.store import run_logs
from tests.support.util import cli, cli_json, snapshot

RUN = "run-i"


def made(sd: api.StateDir, on: bool = True) -> None:
    sd.new(RUN, topic="t", settings=["inquiry_ledger=true"] if on else None)
    sd.stage(RUN, "1", "in_progress")


def test_branches_are_appended_and_published_from_the_second_on(sd: api.StateDir, repo: Path) -> None:
    made(sd)
    code, moves = cli_json("next", RUN, cwd=repo)
    assert {"command": "inquiry", "args": ["branch", "note"], "allowed": {},
            "actor": "pipeline_orchestrator"} in moves["moves"], moves
    code, out = cli_json("inquiry", RUN, "--branch", "main-question", "--note", "the frame as asked", cwd=repo)
    assert code == 0 and out["published"] is False and out["branches"] == 1, out
    assert "inquiry_ledger" not in sd.show(RUN, format="ars")
    sd.inquiry(RUN, branch="main-question", note="a second note")
    assert sd.show(RUN, format="ars").get("inquiry_ledger") is None  # one branch: still not published
    result = sd.inquiry(RUN, branch="rival-frame", note="what if the effect is selection")
    assert result["published"] is True and "published" in result["summary"]
    ledger = sd.show(RUN, format="ars")["inquiry_ledger"]
    assert ledger["branches"] == {"main-question": 2, "rival-frame": 1}
    assert [e["seq"] for e in ledger["entries"]] == [1, 2, 3]
    entries = run_logs.read(sd.store, sd.store.run_dir(RUN), "inquiry_ledger")
    assert [e["branch"] for e in entries] == ["main-question", "main-question", "rival-frame"]
    assert cli("verify", cwd=repo).returncode == 0


def test_the_summary_is_only_at_the_listed_checkpoints(sd: api.StateDir, repo: Path) -> None:
    made(sd)
    sd.inquiry(RUN, branch="a", note="one")
    sd.inquiry(RUN, branch="b", note="two")
    sd.material(RUN, ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"])
    sd.stage(RUN, "1", "completed")
    assert "2 inquiry branches (a, b)" in sd.get(RUN, "checkpoint")["inquiry_summary"]
    assert "Inquiry: 2 inquiry branches" in cli("status", RUN, cwd=repo).stdout
    sd.confirm(RUN, response="continue")
    sd.material(RUN, ["paper_draft"])
    sd.stage(RUN, "2", "completed")
    assert "inquiry_summary" not in sd.get(RUN, "checkpoint")  # stage 2's checkpoint carries none
    assert "Inquiry:" not in cli("status", RUN, cwd=repo).stdout
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "2.5", "FAIL", refs_total=3, refs_verified=1, issues_found=2, issues_fixed=0,
                 actor="integrity_verification")
    sd.inquiry(RUN, branch="c", note="never changes the verdict")
    assert sd.show(RUN)["stages"]["2.5"]["verdict"] == "FAIL"


def test_a_run_without_the_setting_or_bad_input_is_refused(sd: api.StateDir, repo: Path) -> None:
    made(sd, on=False)
    code, moves = cli_json("next", RUN, cwd=repo)
    assert all(m["command"] != "inquiry" for m in moves["moves"])
    before = snapshot(repo)
    code, out = cli_json("inquiry", RUN, "--branch", "a", "--note", "n", cwd=repo)
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION" and "inquiry_ledger=true" in out["error"]["message"]
    assert snapshot(repo) == before


@pytest.mark.parametrize(("branch", "note", "says"), [
    ("bad name", "n", "letters, digits"), ("-x", "n", "letters, digits"), ("a", "  ", "must not be empty"),
    ("a", "x" * 2001, "at most 2000"), ("a", "bell\x07", "control"),
])
def test_bad_branch_or_note_is_refused_naming_what_is_allowed(sd: api.StateDir, repo: Path, branch: str, note: str,
                                                             says: str) -> None:
    made(sd)
    before = snapshot(repo)
    with pytest.raises(StatedirError) as exc:
        sd.inquiry(RUN, branch=branch, note=note)
    assert exc.value.code == "INVALID_VALUE" and says in exc.value.message
    assert snapshot(repo) == before


def test_only_the_orchestrator_writes_the_ledger(sd: api.StateDir, repo: Path) -> None:
    made(sd)
    with pytest.raises(StatedirError) as exc:
        sd.inquiry(RUN, branch="a", note="n", actor="integrity_verification")
    assert exc.value.code == "PERMISSION_DENIED"

"""verify --acknowledge: a reviewed finding recorded in the store (acknowledged.yaml, one commit,
replayed by verify like any transition); verify then lists it apart and exits 0 for it."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import InvalidValue
from tests.support.history import drive, git, hand_commit
from tests.support.util import cli, cli_json, snapshot


@pytest.fixture
def edited(sd: api.StateDir, repo: Path) -> str:
    drive(sd, repo / "draft.md", 3)
    path = repo / "state/runs/p1/state.yaml"
    path.write_text(path.read_text().replace("topic: AI and QA", "topic: by hand"))
    return hand_commit(repo)


def test_an_acknowledged_finding_leaves_verify_clean(sd: api.StateDir, repo: Path, edited: str) -> None:
    assert sd.verify()["findings"][0]["commit"] == edited
    result = sd.acknowledge(edited[:10], reason="reviewed: the topic was mistyped", actor="Ada")
    assert result["commit"] and [(e["commit"], e["kind"], e["by"]) for e in result["acknowledged"]] == [
        (edited, "hand_edit", "Ada")]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "state/.schemas/log-acknowledged.schema.json", "state/acknowledged.yaml"] or \
        git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["state/acknowledged.yaml"]
    body = git(repo, "log", "-1", "--format=%B")
    assert "Statedir-Action: acknowledge" in body and "reviewed: the topic was mistyped" in body
    after = sd.verify()
    assert after["clean"] and after["findings"] == [] and [f["commit"] for f in after["acknowledged"]] == [edited]
    code, out = cli_json("verify", cwd=repo)
    assert code == 0 and out["clean"] is True  # type: ignore[index]
    plain = cli("verify", cwd=repo)
    assert plain.returncode == 0 and "1 acknowledged finding(s)" in plain.stdout
    assert cli("validate", cwd=repo).returncode == 0
    again = sd.acknowledge(edited, reason="twice")
    assert again["commit"] is None and not again["changed"]


def test_a_new_finding_is_not_covered_by_an_old_acknowledgement(sd: api.StateDir, repo: Path, edited: str) -> None:
    sd.acknowledge(edited, reason="reviewed")
    path = repo / "state/runs/p1/state.yaml"
    path.write_text(path.read_text().replace("topic: by hand", "topic: again by hand"))
    second = hand_commit(repo)
    assert [f["commit"] for f in sd.verify()["findings"]] == [second]


def test_acknowledging_needs_a_reason_and_a_commit_with_a_finding(sd: api.StateDir, repo: Path, edited: str) -> None:
    before = snapshot(repo)
    for commit, reason in ((edited, " "), ("HEAD~1", "clean commit"), ("nope", "r")):
        with pytest.raises(InvalidValue):
            sd.acknowledge(commit, reason=reason)
    code, out = cli_json("verify", "--acknowledge", edited, cwd=repo)
    assert code == 2 and "--reason" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before


def test_a_forged_or_edited_acknowledgement_is_a_finding(sd: api.StateDir, repo: Path, edited: str) -> None:
    """Acknowledging by editing acknowledged.yaml by hand is itself a finding; so is an
    acknowledgement commit whose file does not hold what its recorded request appends."""
    sd.acknowledge(edited, reason="reviewed")
    path = repo / "state/acknowledged.yaml"
    path.write_text(path.read_text().replace("reason: reviewed", "reason: rewritten"))
    forged = hand_commit(repo)
    found = sd.verify()["findings"]
    assert [(f["commit"], f["file"]) for f in found] == [(forged, "acknowledged.yaml")]
    message = git(repo, "log", "-1", "--format=%B", "HEAD~1")
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=repo, check=True)
    path.write_text(path.read_text() + path.read_text().split("\n", 1)[1].replace(edited, forged))
    subprocess.run(["git", "commit", "-q", "-am", message], cwd=repo, check=True)
    kinds = {(f["kind"], f["file"]) for f in sd.verify()["findings"]}
    assert ("illegal", "acknowledged.yaml") in kinds


def test_the_mcp_verify_tool_stays_read_only_without_acknowledge() -> None:
    from statedir.cli.registry import command_table
    from statedir.mcp.tools import tools

    verify = tools(command_table())["verify"]
    assert verify.read_only and "acknowledge" not in verify.input_schema["properties"]


def test_as_a_pre_commit_pre_push_hook_verify_replays_only_what_the_push_sends(sd: api.StateDir, repo: Path,
                                                                               edited: str) -> None:
    """pre-commit names the remote's tip in PRE_COMMIT_FROM_REF: a finding before it is not this push's."""
    sd.stage("p1", "1", "completed")
    assert cli("verify", cwd=repo).returncode == 1
    scoped = cli("verify", cwd=repo, env={"PRE_COMMIT_FROM_REF": edited})
    assert scoped.returncode == 0 and "verified 1 commit(s): clean" in scoped.stdout


def test_the_acknowledgements_are_parsed_once_per_content(sd: api.StateDir, repo: Path, edited: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's history page verifies on every request: a long acknowledged.yaml (a sample store's
    thousands of entries) is parsed once per content, not by every verify; a new acknowledgement
    is new content, read again (issue 34, the history page in a 2,000-run store)."""
    from statedir.history import acknowledgements

    parsed: list[int] = []
    real = acknowledgements._parsed
    monkeypatch.setattr(acknowledgements, "_parsed", lambda raw: parsed.append(1) or real(raw))
    sd.acknowledge(edited[:10], reason="reviewed", actor="Ada")
    assert sd.verify()["clean"]
    once = len(parsed)
    assert sd.verify("p1")["clean"] and sd.verify()["clean"] and sd.verify("p1")["clean"]
    assert len(parsed) == once
    path = repo / "state/runs/p1/state.yaml"
    path.write_text(path.read_text().replace("topic: by hand", "topic: by hand again"))
    again = hand_commit(repo)
    assert [f["commit"] for f in sd.verify()["findings"]] == [again]
    sd.acknowledge(again[:10], reason="reviewed too", actor="Ada")
    after = sd.verify()
    assert after["clean"] and {f["commit"] for f in after["acknowledged"]} == {edited, again}
    assert len(parsed) > once

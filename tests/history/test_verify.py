"""verify: a clean history verifies clean; each kind of finding, made by a real git commit the
way a user or an attacker would make it, is found with its commit and file."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.history import driven_copy, git, hand_commit
from tests.support.util import cli, cli_json, segment

RUN = Path("state/runs/p1")


@pytest.fixture
def driven(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    return driven_copy(repo, tmp_path_factory, 11)  # up to the integrity PASS of stage 2.5


def kinds(result: dict) -> set[tuple[str, str]]:
    return {(f["kind"], f["file"]) for f in result["findings"]}


def forge(repo: Path, edit: tuple[str, str, str]) -> str:
    """Remake the last transition's commit with one file edited, keeping its message (trailers,
    recorded request and all): what a forged or doctored transition looks like."""
    message = git(repo, "log", "-1", "--format=%B")
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    path, old, new = edit
    text = (repo / path).read_text()
    assert old in text
    (repo / path).write_text(text.replace(old, new, 1))
    git(repo, "add", path)
    git(repo, "commit", "-q", "-F", "-", stdin=message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.slow  # a whole run, stage by stage through the CLI
def test_a_whole_run_verifies_clean_through_the_cli(driven: api.StateDir, repo: Path) -> None:
    code, out = cli_json("verify", cwd=repo)
    assert code == 0 and out == {"clean": True, "checked": 13, "findings": []}  # init + 12 transitions (a checklist)
    proc = cli("verify", "p1", cwd=repo)
    assert proc.returncode == 0 and "verified 12 commit(s): clean" in proc.stdout


def test_hand_edit(driven: api.StateDir, repo: Path) -> None:
    path = repo / RUN / "state.yaml"
    path.write_text(path.read_text().replace("topic: AI and QA", "topic: something else"))
    sha = hand_commit(repo)
    code, out = cli_json("verify", cwd=repo)
    assert code == 1 and out["findings"] == [{"commit": sha, "kind": "hand_edit", "file": "runs/p1/state.yaml",
                                               "message": "changed without statedir (no Statedir-* trailers)"}]
    assert out["checked"] == 14


def test_illegal_a_doctored_transition(driven: api.StateDir, repo: Path) -> None:
    driven.stage("p1", "2.5", "completed")  # the transition to doctor
    sha = forge(repo, (str(RUN / "stages/2.5.yaml"), "verdict: PASS", "verdict: FAIL"))
    result = driven.verify()
    assert kinds(result) == {("illegal", "runs/p1/stages/2.5.yaml")}
    assert result["findings"][0]["commit"] == sha and not result["clean"]


def test_illegal_forged_trailers_on_a_hand_edit(driven: api.StateDir, repo: Path) -> None:
    """A hand edit committed with a real transition's trailers and request copied: replaying
    that request on its parent is refused (the stage is already completed)."""
    message = git(repo, "log", "-1", "--format=%B", "HEAD~8")  # stage 1 completed
    assert "Statedir-Action: stage" in message and "research is enough" in message
    path = repo / RUN / "state.yaml"
    path.write_text(path.read_text() + "loop_count: 2\n")  # at its default (0) the field is not written
    git(repo, "commit", "-q", "-a", "-F", "-", stdin=message)
    result = driven.verify()
    assert [f["kind"] for f in result["findings"]] == ["illegal"]
    assert "is refused" in result["findings"][0]["message"]


def test_a_hand_edit_riding_in_a_transition_is_a_hand_edit(driven: api.StateDir, repo: Path) -> None:
    driven.stage("p1", "2.5", "completed")
    forge(repo, (str(RUN / "stages/2.5.yaml"), "verdict: PASS", "verdict: PASS  # checked twice"))
    assert kinds(driven.verify()) == {("hand_edit", "runs/p1/stages/2.5.yaml")}


def test_log_rewritten_by_git_revert(driven: api.StateDir, repo: Path) -> None:
    """`git revert` of a transition un-appends its log entries: a hand edit that rewrote logs."""
    git(repo, "revert", "--no-edit", "HEAD")
    sha = git(repo, "rev-parse", "HEAD").strip()
    result = driven.verify()
    found = kinds(result)
    assert ("log_rewritten", f"runs/p1/{segment('transitions')}") in found
    assert ("hand_edit", f"runs/p1/{segment('transitions')}") in found
    assert {f["commit"] for f in result["findings"]} == {sha}
    # (the reverted transition is the checklist: its failure_modes segment, its first entry, goes whole)
    rewritten = [f for f in result["findings"] if f["kind"] == "log_rewritten" and "transitions" in f["file"]]
    assert rewritten and all("removed" in f["message"] for f in rewritten), rewritten
    assert any(e["commit"] == sha and not e["statedir"] for e in driven.log("p1"))  # log shows the revert


def test_log_rewritten_an_entry_changed_under_forged_trailers(driven: api.StateDir, repo: Path) -> None:
    driven.stage("p1", "2.5", "completed")
    forge(repo, (str(RUN / segment("transitions")), "summary: stage 1 completed", "summary: stage 1 skipped"))
    found = kinds(driven.verify())
    assert found == {("log_rewritten", f"runs/p1/{segment('transitions')}"),
                     ("illegal", f"runs/p1/{segment('transitions')}")}


def test_label_reused(driven: api.StateDir, repo: Path) -> None:
    """A version counter set back by hand lets a later, legal registration write a label that
    already named other content: both commits are reported."""
    path = repo / RUN / "state.yaml"
    path.write_text(path.read_text().replace("paper_draft: 2", "paper_draft: 1"))  # paper_draft_v2 exists
    edit = hand_commit(repo, "set the counter back")
    other = repo / "other.md"
    other.write_text("another draft\n")
    made = driven.material("p1", ["paper_draft"], files=[str(other)], upstream=["research_v1"])
    assert made["version_label"] == "paper_draft_v2"
    code, out = cli_json("verify", cwd=repo)
    assert code == 1
    assert {(f["commit"], f["kind"], f["file"]) for f in out["findings"]} == {
        (edit, "hand_edit", "runs/p1/state.yaml"),
        (made["commit"], "label_reused", "runs/p1/materials/paper_draft_v2.yaml")}


def test_verify_a_run_or_since_a_commit(driven: api.StateDir, repo: Path) -> None:
    driven.new("p2", topic="other")
    path = repo / "state/runs/p2/state.yaml"
    path.write_text(path.read_text().replace("topic: other", "topic: edited"))
    hand_commit(repo)
    mark = git(repo, "rev-parse", "HEAD").strip()
    driven.stage("p2", "1", "in_progress")
    assert driven.verify("p1") == {"clean": True, "checked": 12, "findings": []}
    assert not driven.verify("p2")["clean"]
    assert driven.verify(since=mark) == {"clean": True, "checked": 1, "findings": []}
    code, out = cli_json("verify", "--since", "nope", cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE"
    code, out = cli_json("verify", "../x", cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_ID"


def test_verify_since_any_commit_of_a_clean_history_is_clean(driven: api.StateDir, repo: Path) -> None:
    """The files a walk from a later commit reads first name their template's compiled schema:
    statedir wrote them so (sync verifies from the commit it merges into)."""
    shas = git(repo, "rev-list", "HEAD").split()
    for sha in shas[1:]:
        result = driven.verify(since=sha)
        assert result["clean"], (sha, result["findings"])


def test_a_schema_copy_is_derived_data_but_must_be_a_schema(driven: api.StateDir, repo: Path) -> None:
    """`.schemas/` copies are for editors (no check of statedir's reads them): a copy an older
    statedir compiled differently verifies; a copy that is no JSON Schema at all does not."""
    driven.new("q1", template="linear", topic="t")  # the first linear run writes its compiled schemas
    copy = ".schemas/linear/1/run-state.schema.json"
    forge(repo, (f"state/{copy}", '"type"', '"description": "as an older statedir wrote it", "type"'))
    assert driven.verify()["clean"]
    forge(repo, (f"state/{copy}", '"$schema"', '"not-a-schema"'))
    assert kinds(driven.verify()) == {("illegal", copy)}

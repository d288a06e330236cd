"""show/get --at: any moment of a run read from git's object store, nothing checked out."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir import api
from tests.support.history import drive, git, hand_commit
from tests.support.util import cli, cli_json, snapshot


@pytest.mark.slow
def test_show_at_every_commit_of_a_long_run_equals_what_show_printed_then(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md")
    assert len(seen) == 34 and seen[-1][1]["pipeline_state"] == "completed"
    before = snapshot(repo)
    for sha, printed in seen:
        assert sd.show("p1", at=sha) == printed
    assert snapshot(repo) == before  # work tree, index and HEAD untouched
    # through the real CLI too: by full sha, by an abbreviation, by a rev expression
    for rev, (_, printed) in [(seen[3][0], seen[3]), (seen[20][0][:8], seen[20]), ("HEAD~1", seen[-2])]:
        code, out = cli_json("show", "p1", "--at", rev, cwd=repo)
        assert code == 0 and out == json.loads(json.dumps(printed))
    assert snapshot(repo) == before


@pytest.mark.slow  # drives a run through a dozen transitions first, each a commit
def test_get_at_reads_one_value_then(sd: api.StateDir, repo: Path) -> None:
    seen = drive(sd, repo / "draft.md", 12)
    assert sd.get("p1", "stages.2.5.status", at=seen[10][0]) == "in_progress"
    assert sd.get("p1", "stages.2.5.status") == "completed"
    proc = cli("get", "p1", "stages.2.5.retry_count", "--at", seen[8][0], cwd=repo)
    assert proc.returncode == 0 and proc.stdout == "1\n"
    proc = cli("get", "p1", "current_version.paper_draft", "--at", seen[5][0], cwd=repo)
    assert proc.stdout == "paper_draft_v1\n"


def test_a_template_is_read_as_the_store_held_it_then(sd: api.StateDir, repo: Path) -> None:
    """A run on a store template whose file later changes (a stage added, the version kept) still
    reads at the old commit with the old template, and today too: the run recorded the content
    it was made with (the new one would ask for a stage file that never was)."""
    template = repo / "mine.yaml"
    template.write_text((Path(api.__file__).parent.parent.parent / "templates" / "linear.yaml").read_text()
                        .replace("name: linear", "name: mine"))
    created = sd.new("m1", topic="t", template=str(template))["commit"]
    first = sd.show("m1")
    stored = repo / "state" / "templates" / "mine.yaml"
    line = "  - {id: deliver, name: DELIVER, short: DELIVER, produces: [deliverable]}\n"
    assert line in stored.read_text()
    stored.write_text(stored.read_text().replace(line, line + "  - {id: extra, name: EXTRA, short: EXTRA}\n"))
    hand_commit(repo, "add a stage to my template")
    assert sd.show("m1", at=created) == first
    status, out = cli_json("show", "m1", cwd=repo)  # by its own content: no stage file it never had
    assert status == 0 and "extra" not in out["stages"], out  # type: ignore[index,operator]


@pytest.mark.slow  # drives a run through a dozen transitions first, each a commit
def test_bad_revisions_are_bad_input_and_change_nothing(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 3)
    before = snapshot(repo)
    init = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    for rev, code in [("no-such-rev", "INVALID_VALUE"), ("--all", "INVALID_VALUE"), (init, "UNKNOWN_RUN")]:
        status, out = cli_json("show", "p1", "--at", rev, cwd=repo)
        assert status == 2 and out["error"]["code"] == code, out
        proc = cli("get", "p1", "topic", "--at", rev, cwd=repo)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert snapshot(repo) == before

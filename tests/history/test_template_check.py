"""verify's check of stored templates (statedir.history.template_check) reads the template
versions history held before `--since` only when a commit it checks stores a template (or is a
merge): a span of transitions walks no history for them (issue 37: `verify --since HEAD~10` in a
store of 100,000 commits), and a forged version after `--since` is found as before."""
from __future__ import annotations

import json
from pathlib import Path

from statedir import api
from tests.support.history import git
from tests.support.util import cli, own_template


def verify_since(repo: Path, since: str) -> tuple[dict[str, object], list[list[str]]]:
    """verify --since's result and the argv of each `git log` it ran (git's trace2)."""
    trace = repo.parent / "trace2.json"
    trace.unlink(missing_ok=True)
    proc = cli("verify", "--since", since, "--json", cwd=repo, env={"GIT_TRACE2_EVENT": str(trace)})
    assert proc.returncode in (0, 1), proc.stderr
    logs = [event["argv"] for event in map(json.loads, trace.read_text().splitlines())
            if event.get("event") == "start" and "log" in event["argv"]]
    return json.loads(proc.stdout), logs


def new(repo: Path, run: str, path: Path) -> None:
    proc = cli("new", run, "--topic", "t", "--template", str(path), cwd=repo)
    assert proc.returncode == 0, proc.stderr


def test_a_span_that_stores_no_template_walks_no_history_for_them(sd: api.StateDir, repo: Path) -> None:
    new(repo, "a", own_template(repo.parent, "v1.yaml"))  # a template stored before the span
    sd.new("r1", topic="t")
    since = git(repo, "rev-parse", "HEAD").strip()
    for n in range(3):
        sd.set("r1", "topic", f"t {n}", reason="t")
    result, logs = verify_since(repo, since)
    assert result == {"clean": True, "checked": 3, "findings": []}
    assert not any(argv[-1] == "state/templates" for argv in logs), logs  # no walk of the templates' history


def test_a_version_stored_again_with_other_content_after_since_is_still_illegal(sd: api.StateDir,
                                                                               repo: Path) -> None:
    new(repo, "a", own_template(repo.parent, "v1.yaml"))
    since = git(repo, "rev-parse", "HEAD").strip()
    sd.new("r1", topic="t")
    new(repo, "b", own_template(repo.parent, "v1.yaml"))
    stored = repo / "state" / "templates" / "mypipe.yaml"
    stored.write_bytes(stored.read_bytes().replace(b"Linear Pipeline", b"Other rules"))
    git(repo, "add", "-f", str(stored))
    git(repo, "commit", "-q", "--amend", "--no-edit")  # b's commit stores mypipe 1 with other content
    forged = git(repo, "rev-parse", "HEAD").strip()
    result, logs = verify_since(repo, since)
    assert [(f["commit"], f["kind"], f["file"]) for f in result["findings"]] == [  # type: ignore[attr-defined]
        (forged, "illegal", "templates/mypipe.yaml")]
    assert any(argv[-1] == "state/templates" for argv in logs)  # what history held before since: read, once asked

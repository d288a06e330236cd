"""`log RUN` reads only the commits that touched the run, not the whole history: git's
changed-path Bloom filters (the commit-graph statedir's maintenance writes) answer "not this
path" for every other commit without opening it (issue 37, point 2)."""
from __future__ import annotations

import json
from pathlib import Path

from statedir import api
from statedir.gitops import maintenance
from tests.support.history import other_commits
from tests.support.util import cli


def bloom(trace: Path) -> dict[str, int]:
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("category") == "bloom" and event.get("key") == "statistics":
            return event["value"]  # type: ignore[no-any-return]
    return {}


def test_log_run_opens_only_the_commits_of_its_run(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="mine")
    sd.new("r2", topic="other")
    other_commits(repo, 300)
    for n in range(3):
        sd.set("r2", "topic", f"other {n}", reason="t")
    sd.set("r1", "topic", "mine, set", reason="t")
    maintenance.repair(repo)  # the commit-graph, as the maintenance after transitions writes it in time
    trace = repo.parent / "trace2.json"
    proc = cli("log", "r1", "--json", cwd=repo, env={"GIT_TRACE2_EVENT": str(trace)})
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == 2  # new and set
    stats = bloom(trace)
    assert stats["definitely_not"] >= 300  # every other commit answered by its filter, none opened
    assert stats["maybe"] <= 2 + 2 + stats.get("false_positive", 0)  # r1's two (and the store's first ones)
    assert stats["filter_not_present"] == 0

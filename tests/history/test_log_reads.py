"""`log RUN` reads only the commits that touched the run, not the whole history: git's
changed-path Bloom filters (the commit-graph statedir's maintenance writes) answer "not this
path" for every other commit without opening it (issue 37, point 2)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from statedir import api
from statedir.gitops import maintenance
from tests.support.util import cli


def other_commits(repo: Path, count: int) -> None:
    """`count` commits beside the store (a user's files), by git fast-import."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    chunks = []
    for n in range(count):
        message, content = f"user commit {n}\n".encode(), f"{n}\n".encode()
        chunks.append(b"commit HEAD\ncommitter u <u@x> %d +0000\n" % (1700000000 + n)
                      + b"data %d\n%s" % (len(message), message) + (f"from {head}\n".encode() if n == 0 else b"")
                      + b"M 100644 inline notes.txt\ndata %d\n%s\n" % (len(content), content))
    branch = subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, check=True,
                   input=b"".join(chunks).replace(b"commit HEAD\n", f"commit {branch}\n".encode()))
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=repo, check=True)


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

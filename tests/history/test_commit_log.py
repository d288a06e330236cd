"""The commits verify reads (statedir.history.commit_log): a run's newest N, as `log RUN` lists
them, are read from the run's remembered listing (issue 37, point 2: the web history page's
verify), not by walking the history since the oldest of them; whatever the branch did (merges,
clock skew), they are the commits `log RUN` shows, replayed parents first."""
from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import InvalidValue
from statedir.history import verify
from tests.support.history import other_commits, packed_without_graph

SPEC = "state/runs/r1"


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}).stdout


def logged(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%H", "--", SPEC).split()


def pack_reads(repo: Path, monkeypatch: pytest.MonkeyPatch, call: object) -> tuple[int, object]:
    """(objects git read from its packs, the result) for one call: every object is packed first
    and the commit-graph removed, so each commit a walk visits is a read."""
    trace = repo.parent / "pack-access.txt"
    trace.unlink(missing_ok=True)
    with monkeypatch.context() as patched:
        patched.setenv("GIT_TRACE_PACK_ACCESS", str(trace))
        result = call()  # type: ignore[operator]
    return len(trace.read_text().splitlines()) if trace.exists() else 0, result


def test_a_runs_newest_commits_are_read_from_its_listing_not_the_history_since(
        sd: api.StateDir, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sd.new("r1", topic="mine")
    sd.new("r2", topic="other")
    for n in range(3):
        sd.set("r1", "topic", f"old {n}", reason="t")
    other_commits(repo, 1000)
    for n in range(2):
        sd.set("r1", "topic", f"new {n}", reason="t")
    assert sd.verify("r1", newest=3)["clean"]  # the listings remembered (one whole walk each)
    sd.set("r1", "topic", "newer", reason="t")
    sd.set("r2", "topic", "other, newer", reason="t")
    packed_without_graph(repo)
    oldest_shown = logged(repo)[3]  # 3 shown: the three newest, the fourth the oldest left out
    newest, result = pack_reads(repo, monkeypatch, lambda: verify.verify(sd.store, "r1", newest=3))
    since, by_range = pack_reads(repo, monkeypatch, lambda: verify.verify(sd.store, "r1", oldest_shown))
    assert result == by_range and result["checked"] == 3 and result["clean"]  # type: ignore[index]
    assert since >= 1000  # the walk since the oldest shown opens every commit after it
    assert newest <= 250, newest  # the two new commits, the three shown, their trees and files (100 here)


def test_the_newest_are_the_commits_log_shows_whatever_the_branch_did(sd: api.StateDir, repo: Path) -> None:
    rng = random.Random(37)
    sd.new("r1", topic="mine")
    clock = [1700000000]

    def by_hand(name: str, branch_point: bool = False) -> None:  # each a hand edit: one finding of its own
        clock[0] += rng.choice([60, 60, 60, -3600])  # some clock skew: the log's order is not the topology's
        (repo / SPEC / f"notes-{name}.txt").write_text(f"{rng.random()}\n")
        git(repo, "add", "-A")
        stamp = f"{clock[0]} +0000"
        git(repo, "commit", "-q", "-m", name, env={"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp})

    for step in range(12):
        if rng.random() < 0.3:
            git(repo, "checkout", "-q", "-b", f"side{step}")
            by_hand(f"side{step}")
            git(repo, "checkout", "-q", "-")
            by_hand(f"main{step}")
            git(repo, "merge", "-q", "--no-edit", f"side{step}")
        else:
            by_hand(f"step{step}")
    whole = verify.verify(sd.store, "r1")
    shown = logged(repo)
    for count in (1, 4, 9, len(shown), len(shown) + 5):
        result = verify.verify(sd.store, "r1", newest=count)
        checked = {f["commit"] for f in result["findings"]}
        assert checked <= set(shown[:count])  # nothing the log does not show
        assert result["findings"] == [f for f in whole["findings"] if f["commit"] in shown[:count]], count
        assert result["checked"] == min(count, len(shown))


def test_newest_is_a_count_of_one_runs_commits(sd: api.StateDir) -> None:
    sd.new("r1", topic="mine")
    for bad in ({"newest": 0}, {"newest": 2, "since": "HEAD"}):
        with pytest.raises(InvalidValue):
            sd.verify("r1", **bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue):
        sd.verify(newest=2)
    assert sd.verify("r1", newest=1)["checked"] == 1

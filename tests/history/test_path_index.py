"""A run's commits remembered under .git/ (statedir.history.path_index, issue 37 point 2): with
the listing present, `log RUN` reads the commits since it and the run's own, not the history;
whatever happened to the branch (merges, resets, rewrites, a stale or broken file) the listing
is the one git's own walk prints."""
from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.history import path_index
from tests.support.history import other_commits, packed_without_graph
from tests.support.util import cli

SPEC = "state/runs/r1"


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}).stdout


def walked(repo: Path, order: str) -> list[str]:
    return git(repo, "log", *path_index.ORDERS[order], "--format=%H", "--", SPEC).split()


def pack_reads(repo: Path, *args: str) -> tuple[int, str]:
    """(objects git read from packs, stdout) for one CLI call: every object is packed first and
    the commit-graph removed, so each commit a walk visits is a read."""
    trace = repo.parent / "pack-access.txt"
    trace.unlink(missing_ok=True)
    proc = cli(*args, cwd=repo, env={"GIT_TRACE_PACK_ACCESS": str(trace)})
    assert proc.returncode == 0, proc.stderr
    return len(trace.read_text().splitlines()) if trace.exists() else 0, proc.stdout


def test_log_run_with_the_listing_reads_the_new_commits_not_the_history(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="mine")
    sd.new("r2", topic="other")
    other_commits(repo, 400)
    assert cli("log", "r1", cwd=repo).returncode == 0  # the listing written (one whole walk)
    sd.set("r1", "topic", "mine, set", reason="t")
    sd.set("r2", "topic", "other, set", reason="t")
    packed_without_graph(repo)
    with_listing, out = pack_reads(repo, "log", "r1", "--json")
    assert [e["commit"] for e in json.loads(out)] == walked(repo, "date")
    for listing in sd.store.cache_dir.glob("paths/*.json"):
        listing.unlink()
    without, again = pack_reads(repo, "log", "r1", "--json")
    assert again == out
    assert without >= 400  # the walk opens every commit
    assert with_listing <= 60  # the two new commits, their trees down to the run, the run's own three


def test_the_history_page_and_verify_run_read_the_listing(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="mine")
    other_commits(repo, 400)
    sd.set("r1", "topic", "mine, set", reason="t")
    first = cli("verify", "r1", "--json", cwd=repo)
    assert first.returncode == 0, first.stderr
    sd.set("r1", "topic", "mine, set again", reason="t")
    packed_without_graph(repo)
    reads, out = pack_reads(repo, "verify", "r1", "--json")
    assert json.loads(out)["checked"] == 3 and json.loads(out)["clean"]
    for listing in sd.store.cache_dir.glob("paths/*.json"):
        listing.unlink()
    without, again = pack_reads(repo, "verify", "r1", "--json")
    assert again == out
    assert without - reads >= 400, (reads, without)  # the walk of every commit is what the listing saves
    assert sd.signed("r1") == set()


def test_the_listing_is_gits_after_merges_resets_rewrites_and_broken_files(sd: api.StateDir, repo: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(37)
    extended = []
    since = path_index._since
    monkeypatch.setattr(path_index, "_since", lambda *a: extended.append(since(*a)) or extended[-1])
    (repo / SPEC).mkdir(parents=True)
    (repo / "other").mkdir()
    clock = [1700000000]

    def commit(touch: bool, message: str = "c") -> None:
        clock[0] += rng.choice([60, 60, 60, -3600])  # some clock skew: git's date order is not the topology's
        target = repo / (SPEC if touch else "other") / f"f{rng.randrange(3)}"
        target.write_text(f"{rng.random()}\n")
        git(repo, "add", "-A")
        stamp = f"{clock[0]} +0000"
        git(repo, "commit", "-q", "-m", message, env={"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp})

    commit(True)
    for step in range(60):
        op = rng.choice(["touch", "touch", "other", "other", "merge", "ours", "reset", "amend", "break", "drop"])
        if op in ("touch", "other"):
            commit(op == "touch")
        elif op in ("merge", "ours"):
            git(repo, "checkout", "-q", "-b", f"side{step}", f"HEAD~{rng.randrange(2)}")
            for _ in range(rng.randrange(1, 4)):
                commit(rng.random() < 0.6, "side")
            git(repo, "checkout", "-q", "-")
            commit(rng.random() < 0.5)
            strategy = ["-s", "ours"] if op == "ours" else ["-X", "theirs"]
            git(repo, "merge", "-q", "--no-edit", *strategy, f"side{step}")
        elif op == "reset" and len(git(repo, "rev-list", "HEAD").split()) > 3:
            git(repo, "reset", "-q", "--hard", f"HEAD~{rng.randrange(1, 3)}")
        elif op == "amend":
            (repo / SPEC / "amended").write_text(f"{step}\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--amend", "-m", f"amended {step}")
        elif op == "break":
            for listing in sd.store.cache_dir.glob("paths/*.json"):
                listing.write_text(rng.choice(["{", "[]", json.dumps({"format": 1, "tip": "0" * 40})]))
        else:
            for listing in sd.store.cache_dir.glob("paths/*.json"):
                listing.unlink()
        for order in path_index.ORDERS:
            assert path_index.commits(sd.store, SPEC, order=order) == walked(repo, order), (step, op, order)
            assert path_index.commits(sd.store, SPEC, order=order) == walked(repo, order), (step, op, order)
        raw = ["--raw", "--no-renames", "--no-abbrev", "-z", "--format=%x1e%H%x1f%P"]  # verify's reading
        listed = path_index.commits(sd.store, SPEC, order="topo")[::-1]
        assert path_index.records(sd.store, listed, *raw, "--", SPEC).decode() == \
            git(repo, "log", "--reverse", "--topo-order", *raw, "--", SPEC), (step, op)
    taken = sum(found is not None for found in extended)
    assert taken >= 20 and len(extended) - taken >= 10, (taken, len(extended))  # both ways were taken


def test_a_listing_of_a_tip_git_no_longer_has_is_walked_again(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="mine")
    sd.set("r1", "topic", "one", reason="t")
    assert path_index.commits(sd.store, SPEC) == walked(repo, "date")
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    sd.set("r1", "topic", "two", reason="t")
    assert path_index.commits(sd.store, SPEC) == walked(repo, "date")
    proc = cli("log", "r1", "--json", cwd=repo)
    assert [e["commit"] for e in json.loads(proc.stdout)] == walked(repo, "date")


def test_replace_refs_are_walked_never_remembered(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="mine")
    sd.set("r1", "topic", "one", reason="t")
    sd.set("r1", "topic", "two", reason="t")
    path_index.commits(sd.store, SPEC)
    first, second = walked(repo, "date")[-1], walked(repo, "date")[0]
    git(repo, "replace", "--graft", second, first)  # HEAD's ancestry changes, no commit id does
    assert path_index.commits(sd.store, SPEC) == walked(repo, "date")
    assert len(walked(repo, "date")) == 2


def test_a_merge_that_brought_only_other_runs_extends_the_listing(sd: api.StateDir, repo: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    sd.new("r1", topic="mine")
    sd.new("r2", topic="other")
    for order in path_index.ORDERS:
        path_index.commits(sd.store, SPEC, order=order)  # remembered at this tip
    git(repo, "checkout", "-q", "-b", "side")
    sd.set("r2", "topic", "other, on the side", reason="t")
    git(repo, "checkout", "-q", "-")
    sd.set("r1", "topic", "mine, set", reason="t")
    git(repo, "merge", "-q", "--no-edit", "side")  # r1's folder as our side had it: git's log follows ours
    extended = []
    since = path_index._since
    monkeypatch.setattr(path_index, "_since", lambda *a: extended.append(since(*a)) or extended[-1])
    for order in path_index.ORDERS:
        assert path_index.commits(sd.store, SPEC, order=order) == walked(repo, order)
    assert [found is not None for found in extended] == [True, True, False]  # --full-history: both sides, walked

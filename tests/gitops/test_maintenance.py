"""The store's object database kept packed and indexed by statedir itself (gitops.maintenance):
a transition that finds loose objects piling up starts git's maintenance detached, outside the
lock; doctor reports an unhealthy object database and --fix repairs it."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from statedir import api
from statedir.gitops import maintenance
from tests.support.util import cli_json


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True, input=stdin).stdout


def plant_loose(repo: Path, count: int) -> None:
    """`count` loose objects that history holds, as libgit2's commits leave them: blobs written
    by git hash-object -w, a tree of them, a commit of that tree under a ref of the test's."""
    blobs = repo / ".git" / "planted"
    blobs.mkdir()
    for i in range(count):
        (blobs / f"{i}").write_text(f"blob {i}\n")
    names = sorted(p.name for p in blobs.iterdir())
    shas = git(repo, "hash-object", "-w", "--stdin-paths", stdin="".join(f"{blobs / n}\n" for n in names)).split()
    tree = git(repo, "mktree", stdin="".join(f"100644 blob {sha}\t{name}\n" for sha, name in zip(shas, names))).strip()
    commit = git(repo, "commit-tree", tree, "-m", "planted").strip()
    git(repo, "update-ref", "refs/planted/objects", commit)


def test_due_reads_one_fanout_folder(sd: api.StateDir, repo: Path) -> None:
    """The check after a commit costs one directory listing, and says yes only past the trigger."""
    assert not maintenance.due(repo)
    plant_loose(repo, 4000)
    assert maintenance.due(repo)
    assert maintenance.report(repo)["loose"] >= 4000


@pytest.mark.slow  # waits for a detached git gc and commit-graph write
def test_a_transition_past_the_trigger_packs_the_store_in_the_background(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="t")
    plant_loose(repo, 3000)
    before = git(repo, "rev-parse", "HEAD")
    code, out = cli_json("stage", "p1", "1", "in_progress", cwd=repo)
    assert code == 0 and out["commit"]  # type: ignore[index]
    for _ in range(600):  # the maintenance runs detached; the command did not wait for it
        found = maintenance.report(repo)
        if int(found["loose"]) < 1000 and found["changed_paths"]:  # type: ignore[call-overload]
            break
        time.sleep(0.1)
    assert int(found["loose"]) < 1000 and found["packs"] >= 1 and found["changed_paths"], found  # type: ignore
    assert git(repo, "rev-parse", "HEAD~1") == before  # the history is as it was: nothing rewritten
    assert git(repo, "fsck", "--no-progress", "--connectivity-only") == ""


def test_doctor_reports_a_pile_of_loose_objects_and_fix_packs_them(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="t")
    plant_loose(repo, maintenance.UNHEALTHY_LOOSE + 500)
    code, out = cli_json("doctor", cwd=repo)
    assert code == 1 and [f["kind"] for f in out["findings"]] == ["object_database"]  # type: ignore[index]
    assert "loose objects" in out["findings"][0]["message"]  # type: ignore[index]
    code, out = cli_json("doctor", "--fix", cwd=repo)
    assert code == 0 and out["findings"] == [], out  # type: ignore[index]
    assert [f["kind"] for f in out["repaired"]] == ["object_database"]  # type: ignore[index]
    found = maintenance.report(repo)
    assert int(found["loose"]) < 100 and found["changed_paths"], found  # type: ignore[call-overload]

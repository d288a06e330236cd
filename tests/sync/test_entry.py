"""A sync with nothing to merge or push (issue 37, point 3) asks the remote for its branch
(`git ls-remote`) and stops there: no fetch, no scan of the work tree's status, no checkpoint;
what a plain `git pull` took since the last check is still verified and refused."""
from __future__ import annotations

import json
from pathlib import Path

from tests.support.history import forge
from tests.support.sync import git, network, ok
from tests.support.util import cli, snapshot


def commands(trace: Path) -> list[str]:
    return [e["name"] for e in map(json.loads, trace.read_text().splitlines()) if e["event"] == "cmd_name"]


def processes(trace: Path) -> list[list[str]]:
    """The argv of every git process started (each `start` event: ls-remote's upload-pack too)."""
    return [e["argv"] for e in map(json.loads, trace.read_text().splitlines()) if e["event"] == "start"]


def noop(clone: Path, trace: Path) -> list[list[str]]:
    trace.unlink(missing_ok=True)
    proc = cli("sync", "--json", cwd=clone, env={"GIT_TRACE2_EVENT": str(trace)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "up_to_date"
    return processes(trace)


def test_a_no_op_sync_runs_one_git_ls_remote_and_nothing_else(tmp_path: Path) -> None:
    """The branch, its upstream, the remote's URL, the remote-tracking ref and the commit verified
    last are read from the repository's files: git runs `ls-remote` (and the remote's
    upload-pack) alone, whether the refs are loose or packed."""
    c = network(tmp_path, ("a", "b"))
    ok(c["b"], "sync")
    trace = tmp_path / "trace.json"
    before = snapshot(c["b"])
    ran = noop(c["b"], trace)
    assert len(ran) <= 2 and [argv for argv in ran if "ls-remote" in argv], ran
    assert snapshot(c["b"]) == before
    git(c["b"], "pack-refs", "--all")  # HEAD's branch and origin/main in packed-refs now
    before = snapshot(c["b"])
    assert len(noop(c["b"], trace)) <= 2
    assert snapshot(c["b"]) == before
    config = c["b"] / ".git/config"  # a config the file cannot answer alone: git is asked, the answer the same
    config.write_text(config.read_text() + "[include]\n\tpath = nothing-here\n")
    asked = noop(c["b"], trace)
    assert len(asked) > 2 and any("config" in argv for argv in asked)


def test_a_no_op_sync_fetches_nothing_and_scans_no_work_tree(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    ok(c["b"], "sync")
    trace = tmp_path / "trace.json"
    before = snapshot(c["b"])
    proc = cli("sync", "--json", cwd=c["b"], env={"GIT_TRACE2_EVENT": str(trace)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "up_to_date"
    ran = commands(trace)
    assert "ls-remote" in ran
    assert not {"fetch", "status", "ls-files", "merge", "push"} & set(ran), ran
    assert snapshot(c["b"]) == before
    state = c["b"] / "state/runs/r1/state.yaml"
    state.write_text(state.read_text() + "# a hand edit, not committed\n")
    assert ok(c["b"], "sync")["status"] == "up_to_date"  # nothing to merge: nothing it could overwrite
    assert state.read_text().endswith("# a hand edit, not committed\n")


def test_a_no_op_sync_does_the_whole_exchange_once_the_remote_moved(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "from a", "--reason", "a1")
    ok(c["a"], "sync")
    done = ok(c["b"], "sync")
    assert done["status"] == "fast_forward" and done["commit"] == git(c["a"], "rev-parse", "HEAD")
    ok(c["b"], "set", "r1", "topic", "from b", "--reason", "b1")
    assert ok(c["b"], "sync")["status"] == "pushed"
    assert ok(c["b"], "sync")["status"] == "up_to_date"
    assert git(c["a"], "ls-remote", "origin", "refs/heads/main").split()[0] == git(c["b"], "rev-parse", "HEAD")


def test_what_a_plain_git_pull_took_is_refused_by_the_no_op_sync_after_it(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    ok(c["b"], "sync")
    state = (c["a"] / "state/runs/r1/state.yaml").read_bytes()
    forged = forge(c["a"], {"runs/r1/state.yaml": state.replace(b"topic:", b"topic: forged", 1)},
                   action="set", run="r1")
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    git(c["b"], "pull", "-q", "--ff-only")  # HEAD is the remote's now: the sync after it exchanges nothing
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode != 0, proc.stdout
    error = json.loads(proc.stdout)["error"]
    assert "does not verify" in error["message"] and forged[:10] in error["message"], error

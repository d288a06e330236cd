"""A plain sync where nothing moved since the last (statedir.sync.unmoved): one `git ls-remote`
(and the remote's upload-pack), the record and a few of git's small files read, no run's file,
neither the store, the sync nor pathlib loaded; anything moved, and the whole sync
runs with every check."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statedir.gitops import git_owner
from statedir.store import discovery, layout, sync_journal
from statedir.sync import unmoved
from tests.support.branch import B, with_remote
from tests.support.history import forge
from tests.support.sync import git, network, ok
from tests.support.util import cli, snapshot

# The CLI in a fresh process, as the console script starts it, reporting what it loaded and opened.
_PROBE = """
import json, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and args else None)
from statedir.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules), "opened": opened}))
"""


def probe(clone: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """`statedir ARGS` run in `clone`: its exit code, output, modules loaded, files opened and git processes."""
    trace = clone.parent / f"{clone.name}.trace.json"
    trace.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-P", "-c", _PROBE, *args], cwd=clone, capture_output=True, text=True,
                          env={**os.environ, "GIT_TRACE2_EVENT": str(trace), **(env or {})}, timeout=120)
    output, _, report = proc.stdout.rstrip("\n").rpartition("\n")
    events = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    return {**json.loads(report), "stdout": output.rstrip("\n"), "stderr": proc.stderr,
            "git": [e["argv"] for e in events if e["event"] == "start"]}


def short(found: dict[str, object]) -> bool:
    """Whether the record answered (the store, which the whole sync opens first, unloaded)."""
    return "statedir.store.store" not in found["modules"]  # type: ignore[operator]


@pytest.fixture
def synced(tmp_path: Path) -> Path:
    """Clone b of a network, synced once with nothing to exchange: the record is there."""
    c = network(tmp_path, ("a", "b"))
    assert ok(c["b"], "sync")["status"] == "up_to_date"
    assert (c["b"] / ".git/statedir/synced").is_file()
    return c["b"]


def test_a_no_op_sync_after_one_runs_one_git_and_reads_no_run(synced: Path) -> None:
    before, record = snapshot(synced), (synced / ".git/statedir/synced").read_bytes()
    found = probe(synced, "sync", "--json")
    assert found["code"] == 0 and short(found), found
    assert json.loads(found["stdout"])["status"] == "up_to_date"
    ran = found["git"]
    assert len(ran) == 2 and "ls-remote" in ran[0] and "git-upload-pack" in ran[1][0], ran  # type: ignore[index]
    opened = [Path(p) for p in found["opened"] if p.startswith("/") and "site-packages" not in p  # type: ignore[union-attr]
              and not p.endswith((".py", ".pyc")) and Path(p).is_relative_to(synced)]
    assert not [p for p in opened if p.is_relative_to(synced / "state/runs")], opened
    assert {p.relative_to(synced).as_posix() for p in opened} <= {
        ".git/HEAD", ".git/refs/heads/main", ".git/refs/remotes/origin/main", ".git/packed-refs", ".git/config",
        "state/.gitattributes", ".git/statedir/synced", ".git/commondir"}, opened
    modules = set(found["modules"])  # type: ignore[arg-type]
    assert not {"pathlib", "statedir.store.store", "statedir.sync.entry", "statedir.cli.sync"} & modules
    # nor anything else not needed before the answer: typing, contextlib, the errors, the hints, the CLI's words
    assert not {"typing", "contextlib", "statedir.errors", "statedir.hints", "statedir.cli.words"} & modules, modules
    assert snapshot(synced) == before and (synced / ".git/statedir/synced").read_bytes() == record  # nothing written


def test_it_says_what_the_whole_sync_says(synced: Path) -> None:
    for args in (("sync",), ("sync", "--json")):
        quick = probe(synced, *args)
        (synced / ".git/statedir/synced").unlink()
        whole = probe(synced, *args)
        assert short(quick) and not short(whole)
        assert (quick["code"], quick["stdout"], quick["stderr"]) == (whole["code"], whole["stdout"], whole["stderr"])
        assert (synced / ".git/statedir/synced").is_file()  # the whole no-op wrote it again


def _transition(clone: Path) -> None:
    ok(clone, "set", "r1", "topic", "moved here", "--reason", "r")


def _fetched(clone: Path) -> None:
    a = clone.parent / "a"
    ok(a, "set", "r1", "topic", "from a", "--reason", "r")
    ok(a, "sync")
    git(clone, "fetch", "-q", "origin")  # the remote-tracking ref moved, HEAD not


def _remote_moved(clone: Path) -> None:
    a = clone.parent / "a"
    ok(a, "set", "r1", "topic", "from a", "--reason", "r")
    ok(a, "sync")


def _verified_other(clone: Path) -> None:
    git(clone, "config", "branch.main.statedirVerified", git(clone, "rev-parse", "HEAD~1"))


def _upstream_other(clone: Path) -> None:
    git(clone, "remote", "add", "other", git(clone, "remote", "get-url", "origin"))
    git(clone, "fetch", "-q", "other")
    git(clone, "branch", "-q", "--set-upstream-to=other/main", "main")


def _attributes_edited(clone: Path) -> None:
    path = clone / "state/.gitattributes"
    path.write_text(path.read_text() + "# edited\n")


def _busy(name: str):  # type: ignore[no-untyped-def]
    def make(clone: Path) -> None:
        path = clone / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return make


@pytest.mark.parametrize("change, status", [
    (_transition, "pushed"), (_fetched, "fast_forward"), (_remote_moved, "fast_forward"),
    (_verified_other, "up_to_date"), (_upstream_other, "up_to_date"), (_attributes_edited, "up_to_date"),
    (_busy(".git/statedir/git.owner"), None), (_busy(".git/index.lock"), None),
    (_busy(".git/MERGE_HEAD"), None), (_busy("state/.statedir.txn"), None), (_busy(".git/statedir/sync.json"), None),
])
def test_anything_moved_or_under_way_takes_the_whole_sync(synced: Path, change, status: str | None) -> None:  # type: ignore[no-untyped-def]
    change(synced)
    found = probe(synced, "sync", "--json")
    assert not short(found), found
    if status is not None:
        assert found["code"] == 0 and json.loads(found["stdout"])["status"] == status, found


@pytest.mark.parametrize("env", [{"GIT_CONFIG_PARAMETERS": "'core.abbrev=12'"}, {"GIT_DIR": ".git"},
                                 {"STATEDIR_LOCK_TIMEOUT": "5"}, {"STATEDIR_ACTOR": "bad actor"},
                                 {"STATEDIR_STORE": ""}])
def test_what_the_whole_sync_reads_of_the_environment_sends_it_the_whole_way(synced: Path, env: dict[str, str]) -> None:
    assert not short(probe(synced, "sync", "--json", env=env))


def test_a_record_naming_a_folder_git_cannot_be_run_in_sends_it_the_whole_way(synced: Path) -> None:
    """The record's last line is where git reaches the remote from: a NUL in it (a hand-edited record) is
    no traceback, the whole sync decides."""
    record = synced / ".git/statedir/synced"
    lines = record.read_text().split("\n")
    record.write_text("\n".join([*lines[:-2], lines[-2] + "\x00", ""]))
    found = probe(synced, "sync", "--json")
    assert not short(found) and found["code"] == 0 and "Traceback" not in found["stderr"], found


def test_an_option_or_another_folder_sends_it_the_whole_way(synced: Path) -> None:
    assert not short(probe(synced, "sync", "--remote", "origin", "--json"))
    assert short(probe(synced, "sync", env={"STATEDIR_STORE": str(synced / "state"), "STATEDIR_ACTOR": "me"}))
    assert short(probe(synced / "state" / "runs", "sync"))  # the store is found above the folder, as discovery does


def test_what_a_plain_git_pull_took_after_the_record_is_refused(synced: Path) -> None:
    a = synced.parent / "a"
    state = (a / "state/runs/r1/state.yaml").read_bytes()
    forged = forge(a, {"runs/r1/state.yaml": state.replace(b"topic:", b"topic: forged", 1)}, action="set", run="r1")
    git(a, "push", "-q", "origin", "HEAD:main")
    git(synced, "pull", "-q", "--ff-only")
    proc = cli("sync", "--json", cwd=synced)
    assert proc.returncode != 0 and forged[:10] in json.loads(proc.stdout)["error"]["message"], proc.stdout


def test_the_names_it_shares_with_the_store_are_the_stores() -> None:
    assert (unmoved.CONFIG, unmoved.JOURNAL) == (layout.CONFIG, layout.JOURNAL)
    assert f"statedir/{sync_journal.JOURNAL}" in unmoved.BUSY and f"statedir/{git_owner.NAME}" in unmoved.BUSY


def test_the_store_it_finds_is_the_one_discovery_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    (repo / "state").mkdir(parents=True)
    (repo / "state" / layout.CONFIG).write_text("")
    (repo / "own").mkdir()
    (repo / "own" / layout.CONFIG).write_text("")
    (repo / "deep" / "er").mkdir(parents=True)
    for cwd in (repo, repo / "state", repo / "own", repo / "deep" / "er"):
        assert unmoved.store_root(None, str(cwd)) == str(discovery.locate(cwd).resolve())
    for given in ("repo", "repo/state", "repo/own", "repo/deep"):
        expected = discovery.given_or_nearest(Path(given))
        assert unmoved.store_root(given, str(tmp_path)) == str((tmp_path / expected).resolve())
    assert unmoved.store_root(None, str(tmp_path)) is None


def test_a_store_on_a_branch_of_its_own_goes_the_whole_way(repo: Path, tmp_path: Path) -> None:
    """`init --branch`: its hooks are per-worktree config (extensions.worktreeConfig), which the config
    file alone cannot answer for: no record, and every sync the whole one, as before."""
    with_remote(repo, tmp_path / "remote.git")
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    assert ok(repo, "sync")["status"] == "pushed"
    assert ok(repo, "sync")["status"] == "up_to_date"
    assert not list(repo.glob(".git/**/synced"))
    whole = probe(repo, "sync", "--json")
    assert not short(whole) and json.loads(whole["stdout"])["status"] == "up_to_date", whole

"""Store-level properties: what a transition opens, appends, locks and rolls back."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import CorruptStore, InvalidId
from statedir.gitops import git
from statedir.store import journal, layout
from tests.support.opened import reads, record
from tests.support.util import copy_of, segment


def two_runs(sd: api.StateDir) -> None:
    sd.new("r1", topic="one")
    sd.new("r2", topic="two")


@pytest.fixture
def sd(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    """A store holding runs r1 and r2: made once per process and copied."""
    return copy_of("store-two-runs", two_runs, repo, tmp_path_factory)[0]


def test_appending_never_reads_the_log(sd: api.StateDir) -> None:
    opened = record(lambda: sd.stage("r1", "1", "in_progress"))
    assert any(p.endswith(segment("transitions")) for p, _, _ in opened)
    assert reads(opened, "/history/") == []


def test_appending_works_whatever_the_log_holds(sd: api.StateDir, repo: Path) -> None:
    log = repo / "state" / "runs" / "r1" / segment("transitions")
    before = log.read_bytes()
    sd.stage("r1", "1", "in_progress")
    after = log.read_bytes()
    assert after.startswith(before) and after.count(b"  - at: ") == before.count(b"  - at: ") + 1


def test_a_one_run_command_opens_no_other_runs_files(sd: api.StateDir) -> None:
    opened = record(lambda: (sd.stage("r1", "1", "in_progress"), sd.get("r1", "stages.1.status")))
    assert [p for p, _, _ in opened if "/runs/r2" in p] == []
    assert [p for p, _, _ in opened if "/runs/r1/" in p]


def test_store_paths_refuse_escapes(sd: api.StateDir, tmp_path: Path) -> None:
    store = sd.store
    with pytest.raises(InvalidId):
        store.run_dir("../x")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (store.root / "runs" / "evil").symlink_to(outside, target_is_directory=True)
    with pytest.raises(CorruptStore):
        store.path("runs/evil/state.yaml")


@pytest.mark.parametrize("run_id", [".", "..", "a/b", "", "-x", "x" * 129, "a b", "a\x00b", "é"])
def test_invalid_run_ids(run_id: str) -> None:
    with pytest.raises(InvalidId):
        layout.check_run_id(run_id)


def test_an_interrupted_transition_is_rolled_back_by_the_next_command(sd: api.StateDir, repo: Path) -> None:
    state = repo / "state" / "runs" / "r1" / "state.yaml"
    committed = state.read_bytes()
    saved = journal.before(sd.store, ["runs/r1/state.yaml", "runs/r1/materials/x_v1.yaml"], [])
    journal.begin(sd.store, saved, git.head(repo), "a transition that dies")
    state.write_text("half: written\n")
    (repo / "state" / "runs" / "r1" / "materials").mkdir()
    (repo / "state" / "runs" / "r1" / "materials" / "x_v1.yaml").write_text("x: 1\n")
    fresh = api.StateDir(repo / "state")
    assert state.read_bytes() == committed
    assert not (repo / "state" / "runs" / "r1" / "materials").exists()
    assert fresh.runs()[0]["run_id"] == "r1"


def test_a_run_never_loads_its_template_from_a_path(sd: api.StateDir, repo: Path) -> None:
    rogue = repo / "rogue.yaml"
    rogue.write_text((Path(__file__).parents[2] / "templates" / "linear.yaml").read_text())
    state = repo / "state" / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("template: academic-pipeline", "template: rogue.yaml"))
    with pytest.raises(CorruptStore, match="does not hold"):
        sd.stage("r1", "1", "in_progress")


def _git_commands_reading_an_index(trace: Path) -> tuple[list[str], set[str]]:
    """From a GIT_TRACE2_EVENT file: the git commands run, and those that read an index."""
    import json

    names: dict[str, str] = {}
    readers = set()
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "cmd_name":
            names[event["sid"]] = event["name"]
        elif event["event"] == "region_enter" and event.get("label") == "do_read_index":
            readers.add(names.get(event["sid"], "?"))
    return list(names.values()), readers


@pytest.mark.slow  # a 14,000-file repository
def test_a_commit_in_a_large_repository_reads_no_index_but_the_users(repo: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the commit costs the trees on the changed paths, not the tracked files: in a
    repository above the plumbing threshold, no git reads an index (the user's is brought to
    HEAD by statedir.gitops.index_splice, which looks at the changed entries alone), and no git
    lists or writes a tree (the last commit's are loose objects, read and written here)."""
    import subprocess

    from tests.support.util import make_large

    make_large(repo)
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("r1", topic="one")
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    sd.stage("r1", "1", "in_progress")
    commands, readers = _git_commands_reading_an_index(trace)
    # the objects (and the trees and next index, in-process: all before git's index.lock), then HEAD (under it)
    assert commands == ["hash-object", "commit-tree", "update-ref"]
    assert readers == set()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == ""


def test_a_transition_in_a_small_repository_is_one_git_process(sd: api.StateDir, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's index updated first, in-process (before HEAD moves), then `git commit --only`,
    and nothing it would start itself (no auto-maintenance, no asking git about hand edits
    when statedir made the last commit)."""
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    sd.stage("r1", "1", "in_progress")
    commands, _ = _git_commands_reading_an_index(trace)
    assert commands == ["commit"]


def test_a_warm_transition_imports_no_ruamel(sd: api.StateDir, repo: Path) -> None:
    """Files in the parse cache, or written by statedir itself (an empty ledger log among
    them), are read without ruamel; only hand-edited text needs it."""
    import subprocess

    sd.new("r3", topic="t", settings=["passport_reset=true"])  # the ledger is read on load
    sd.get("r3", "topic")  # the cache learns the store's hand-commented template
    probe = ("import sys, statedir; sd = statedir.open(sys.argv[1]); sd.stage('r3', '1', 'in_progress'); "
             "sd.load('r3'); print(sorted(m for m in sys.modules if m.startswith('ruamel')))")
    out = subprocess.run([sys.executable, "-c", probe, str(repo / "state")], capture_output=True, text=True,
                         check=True).stdout
    assert out == "[]\n"

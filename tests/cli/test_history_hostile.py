"""Hostile input to the history commands: any arguments, and hostile files committed into
history, give exit 0-3 with a clear message, never a traceback, and change nothing."""
from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statedir import api
from tests.support.isolation import module_store
from tests.support.reliability import HOSTILE_FILES, NASTY
from tests.support.util import call, snapshot, today

pytestmark = [pytest.mark.slow,  # any arguments to the history commands, property-based
              pytest.mark.usefixtures("isolated")]

COMMANDS = ["diff", "versions", "rollback", "verify", "doctor", "show", "get", "log"]
OPTIONS = ["--at", "--since", "--limit", "--to", "--reason", "--actor", "--action", "--fix", "--json", "HEAD",
           "HEAD~1", "HEAD~99", "@{-1}", "main", "0", "-1", "2026-11-30", "1 day ago", "rq_brief", "research"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with module_store(tmp_path_factory, "hostile-history") as work:
        sd = api.StateDir(work / "state")
        sd.new("r1", topic="hostile")
        sd.stage("r1", "1", "in_progress")
        sd.material("r1", ["rq_brief"])
        yield work


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(COMMANDS),
       words=st.lists(st.one_of(st.sampled_from(NASTY), st.sampled_from(OPTIONS), st.text(max_size=12)),
                      max_size=6))
def test_any_arguments(store: Path, command: str, words: list[str]) -> None:
    args = [command, *words, "--store", str(store / "state")]
    before = snapshot(store)
    code, out, err = call(args)
    assert code in (0, 1, 2, 3), (args, code)
    assert "Traceback" not in out + err
    if command == "rollback" and code == 0:  # a legal rollback: put the store back for the next example
        subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=store, check=True)
    elif command != "doctor":
        assert snapshot(store) == before, args
    if code != 0:
        assert (err.strip() or out.strip()), args


@pytest.mark.parametrize("target", ["runs/r1/state.yaml", "runs/r1/history/transitions/{today}.yaml",
                                    "runs/r1/materials/research_v1.yaml"])
@pytest.mark.parametrize("name", sorted(set(HOSTILE_FILES) - {"huge"}))
def test_hostile_files_committed_into_history(repo: Path, target: str, name: str) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("r1", topic="t")
    sd.material("r1", ["rq_brief"])
    target = target.format(today=today())
    (repo / "state" / target).write_bytes(HOSTILE_FILES[name])
    subprocess.run(["git", "commit", "-q", "-am", "planted"], cwd=repo, check=True)
    store = str(repo / "state")
    before = snapshot(repo)
    code, out, err = call(["verify", "--json", "--store", store])
    assert code == 1 and '"hand_edit"' in out and "Traceback" not in err, (out, err)
    for args in (["show", "r1", "--at", "HEAD"], ["show", "r1", "--at", "HEAD~1"], ["diff", "r1", "HEAD~1", "HEAD"],
                 ["get", "r1", "topic", "--at", "HEAD"], ["log", "r1"], ["versions", "r1", "rq_brief"],
                 ["rollback", "r1", "--to", "HEAD~1", "--reason", "undo the plant"], ["doctor"]):
        code, out, err = call([*args, "--store", store])
        assert code in (0, 1, 2, 3) and "Traceback" not in out + err, (args, code, err)
        if code:
            assert snapshot(repo) == before, args
        else:
            before = snapshot(repo)

"""Hostile input: any CLI arguments and any planted file give exit 0-3 with a clear message,
never a traceback; a refused command leaves the store byte-identical."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statedir import api
from tests.support.isolation import module_store
from tests.support.reliability import COMMANDS, HOSTILE_FILES, NASTY, OPTIONS, TARGETS, any_call
from tests.support.util import call, snapshot, today

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated")]  # hostile arguments and files, property-based


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with module_store(tmp_path_factory, "hostile") as work:
        sd = api.StateDir(work / "state")
        sd.new("r1", topic="hostile")
        sd.stage("r1", "1", "in_progress")
        yield work


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(COMMANDS),
       words=st.lists(st.one_of(st.sampled_from(NASTY), st.sampled_from(OPTIONS), st.text(max_size=12)),
                      max_size=6))
def test_any_arguments(store: Path, command: str, words: list[str]) -> None:
    code, out, _ = any_call(store, [command, *words, "--store", str(store / "state")])
    if code != 0 and "--json" in words and out.strip().startswith("{"):
        assert '"error"' in out or '"valid"' in out or '"prerequisites_met"' in out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_planted_files(repo: Path, target: str, name: str) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("r1", topic="t")
    target = target.format(today=today())
    planted = repo / "state" / target
    planted.parent.mkdir(parents=True, exist_ok=True)  # a new run has no stage files yet: planted anew
    planted.write_bytes(HOSTILE_FILES[name])
    for args in (["stage", "r1", "1", "in_progress"], ["status", "r1"], ["show", "r1", "--format", "ars"],
                 ["validate"], ["runs"], ["log", "r1"], ["get", "r1", "topic"]):
        before = snapshot(repo)
        code, out, err = call([*args, "--store", str(repo / "state")])
        assert code in (0, 1, 2, 3) and "Traceback" not in out + err, (args, code, err)
        if code:
            assert snapshot(repo) == before, args
        if args == ["validate"] and (name, target) != ("empty", f"runs/r1/history/transitions/{today()}.yaml"):
            assert code == 1 and target in out


def test_symlinks_planted_in_the_store(repo: Path, tmp_path: Path) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("r1", topic="t")
    secret = tmp_path / "secret.yaml"
    secret.write_text("run_id: r1\n")
    history = repo / "state" / "runs" / "r1" / "history"
    (history / "integrity.yaml").symlink_to(secret)  # a log of the layout before segments
    (tmp_path / "elsewhere").mkdir()
    (history / "checkpoints").symlink_to(tmp_path / "elsewhere")  # a log's folder of segments
    stages = repo / "state" / "runs" / "r1" / "stages"
    stages.mkdir(exist_ok=True)  # a new run writes no stage file until a stage has something to say
    (stages / "2.yaml").symlink_to(secret)
    for args in (["stage", "r1", "1", "in_progress"], ["show", "r1"], ["validate"]):
        code, out, err = call([*args, "--store", str(repo / "state")])
        assert code in (1, 2, 3) and "Traceback" not in out + err, (args, out, err)
    assert secret.read_text() == "run_id: r1\n"
    assert list((tmp_path / "elsewhere").iterdir()) == []

"""Hostile input: any CLI arguments and any planted file give exit 0-3 with a clear message,
never a traceback; a refused command leaves the store byte-identical."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import call, module_store, snapshot, today
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statedir import api

pytestmark = pytest.mark.slow  # hostile arguments and files, property-based

NASTY = ["../x", "../../etc/passwd", "/etc/passwd", "..", ".", "a/../../b", "x\x00y", "é", "\udcff",
         "-rf", "--json", "$(reboot)", "a" * 5000, "", " ", "2.5/../..", "3'", "runs/r1", "\n", "%s%n",
         "r1", "1", "2.5", "paper_draft", "PASS", "completed", "in_progress", "--store", "/dev/null"]
COMMANDS = ["new", "runs", "show", "get", "status", "stage", "output", "pipeline", "set", "material",
            "integrity", "revision", "loop", "prereq", "observe", "confirm", "redo", "log", "validate",
            "resume", "bind", "seal", "templates"]
OPTIONS = ["--topic", "--template", "--entry-point", "--format", "--mode", "--output", "--decision", "--reason",
           "--turns", "--file", "--upstream", "--refs-total", "--refs-verified", "--issue", "--items-total",
           "--stage", "--checkpoint", "--report", "--next", "--response", "--actor", "--passport", "--bindings",
           "--choice", "--line", "--json", "--schema", "--artifact-root", "--artifact", "--role", "--group",
           "--group-stage", "--path", "--not-applicable", "--unavailable"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = module_store(tmp_path_factory, "hostile").parent
    sd = api.StateDir(repo / "w" / "state")
    sd.new("r1", topic="hostile")
    sd.stage("r1", "1", "in_progress")
    return repo / "w"


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(COMMANDS),
       words=st.lists(st.one_of(st.sampled_from(NASTY), st.sampled_from(OPTIONS), st.text(max_size=12)),
                      max_size=6))
def test_any_arguments(store: Path, command: str, words: list[str]) -> None:
    args = [command, *words, "--store", str(store / "state")]
    before = snapshot(store)
    code, out, err = call(args)
    assert code in (0, 1, 2, 3), (args, code)
    assert "Traceback" not in out + err
    if code != 0:
        assert snapshot(store) == before, args
        assert (err.strip() or out.strip()), args
        if "--json" in words and out.strip().startswith("{"):
            assert '"error"' in out or '"valid"' in out or '"prerequisites_met"' in out


HOSTILE_FILES = {
    "alias bomb": b"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    "python tag": b"a: !!python/object/apply:os.system ['true']\n",
    "invalid utf-8": b"run_id: \xff\n",
    "duplicate keys": b"run_id: r1\nrun_id: r2\n",
    "deep nesting": b"a: " + b"[" * 3000 + b"]" * 3000,
    "nul byte": b"run_id: r\x00\n",
    "huge": b"# " + b"x" * (17 * 1024 * 1024) + b"\n",
    "not a mapping": b"- 1\n- 2\n",
    "empty": b"",
    "wrong types": b"run_id: [1]\nstages: 7\n",
    "very long value": b"topic: " + b"y" * 200_000 + b"\n",
}
TARGETS = ["runs/r1/state.yaml", "runs/r1/stages/1.yaml", "runs/r1/history/transitions/{today}.yaml", "statedir.yaml"]


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

"""Every actor x every mutating command through the CLI: allowed, or PERMISSION_DENIED and nothing changed."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.util import call, snapshot

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated")]  # the whole permission matrix through the CLI

COMMANDS = {
    "stage": ["stage", "r1", "1", "in_progress"],
    "output": ["output", "r1", "1", "--output", "Bibliography"],
    "pipeline": ["pipeline", "r1", "paused"],
    "set": ["set", "r1", "topic", "new", "--reason", "r"],
    "material": ["material", "r1", "rq_brief"],
    "integrity": ["integrity", "r1", "2.5", "PASS", "--refs-total", "1", "--refs-verified", "1"],
    "revision": ["revision", "r1", "--items-total", "1"],
    "loop": ["loop", "r1"],
    "observe": ["observe", "r1", "--stage", "1", "--checkpoint", "FULL", "--report", "REPORT"],
    "confirm": ["confirm", "r1"],
    "redo": ["redo", "r1", "1", "--reason", "r"],
    "resume": ["resume", "r1", "0123456789ab"],
    "bind": ["bind", "r1", "re_review_traceability", "--unavailable", "source_not_provided"],
    "seal": ["seal", "r1", "--artifact-root", "."],
    "new": ["new", "r2", "--topic", "t"],
}
ACTORS = {
    "pipeline_orchestrator": {"stage", "pipeline", "set", "material", "revision", "loop", "confirm", "redo",
                              "resume", "bind", "seal", "new"},
    "integrity_verification": {"integrity"},
    "collaboration_depth_agent": {"observe"},
    "deep-research": {"output"},
    "academic-paper": set(),
    "academic-paper-reviewer": set(),
    "an-unknown-agent": set(),
}


@pytest.mark.parametrize("actor", sorted(ACTORS))
def test_permission_matrix_through_the_cli(repo: Path, actor: str) -> None:
    api.init(repo / "state")
    report = repo / "report.yaml"
    report.write_text("zone: Zone 2\nadvisory_only: true\n")
    for command, args in COMMANDS.items():
        # a fresh run each time, stage 1 in progress, so every command is otherwise plausible
        sd = api.StateDir(repo / "state")
        run_id = f"r-{command}"
        sd.new(run_id, topic="t")
        if command != "stage":
            sd.stage(run_id, "1", "in_progress")
        argv = [a.replace("r1", run_id).replace("r2", f"{run_id}-new").replace("REPORT", str(report)) for a in args]
        before = snapshot(repo)
        code, out, err = call([*argv, "--actor", actor, "--json", "--store", str(repo / "state")])
        denied = '"PERMISSION_DENIED"' in out
        if command in ACTORS[actor]:
            assert not denied, (actor, command, out)
        else:
            assert code == 1 and denied, (actor, command, code, out)
            assert snapshot(repo) == before, (actor, command)

"""A store recorded by statedir as it landed with academic-pipeline 3.22 (tests/fixtures/
make-store-3.22.sh): whatever the rules and file formats of later versions, its history replays
clean, its runs read, and a 3.22 run moves on by 3.22's rules."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.util import cli, cli_json

FIXTURE = Path(__file__).parent.parent / "fixtures" / "store-3.22.bundle"


@pytest.fixture
def old(isolated: Path) -> Path:
    repo = isolated / "store-3.22"
    subprocess.run(["git", "clone", "-q", str(FIXTURE), str(repo)], check=True)
    return repo


def test_a_3_22_store_verifies_clean_and_reads(old: Path) -> None:
    code, out = cli_json("verify", cwd=old)
    assert code == 0 and out["clean"], out  # type: ignore[index]
    for run, state in (("q1", "completed"), ("q2", "completed"), ("q3", "initializing"), ("l1", "running")):
        code, shown = cli_json("status", run, cwd=old)
        assert code == 0 and shown["pipeline_state"] == state, (run, shown)  # type: ignore[index]
    assert cli_json("get", "q3", "template_version", cwd=old)[1] == "3.22"
    assert cli("validate", cwd=old).returncode == 0


def test_a_3_22_run_moves_on_by_its_rules_and_the_store_still_verifies(old: Path) -> None:
    code, moves = cli_json("next", "q3", cwd=old)
    assert code == 0 and moves["moves"], moves  # type: ignore[index]
    assert cli("stage", "q3", "2.5", "in_progress", cwd=old).returncode == 0
    assert cli("new", "q4", "--topic", "a run made now", cwd=old).returncode == 0
    assert cli_json("get", "q3", "template_version", cwd=old)[1] == "3.22"
    code, out = cli_json("verify", cwd=old)
    assert code == 0 and out["clean"], out  # type: ignore[index]


def test_a_run_made_on_3_22_after_a_3_23_run_is_illegal(old: Path) -> None:
    """A statedir that took 3.23 never takes 3.22 again: a `new` on the older version replayed on a
    parent holding a run on the newer one is what an older statedir (or a forger) made."""
    q3 = subprocess.run(["git", "log", "--format=%H", "--grep=new run q3"], cwd=old, capture_output=True, text=True,
                        check=True).stdout.strip()
    subprocess.run(["git", "reset", "-q", "--hard", f"{q3}~1"], cwd=old, check=True)
    assert cli("new", "q4", "--topic", "a run made on 3.23", cwd=old).returncode == 0
    subprocess.run(["git", "cherry-pick", q3], cwd=old, check=True, capture_output=True)  # q3's `new`, on 3.22
    code, out = cli_json("verify", cwd=old)
    assert code == 1, out
    [finding] = out["findings"]  # type: ignore[index]
    assert finding["kind"] == "illegal" and "version 3.22" in finding["message"] and "q3" in finding["file"]


def test_a_3_22_run_keeps_its_short_names_and_a_3_23_run_tells_3p_from_4p(old: Path) -> None:
    """3.23's one-line dashboard names 3' and 4' RE-REVIEW and RE-REVISE; a 3.22 run keeps RE-REV, RE-REV'."""
    assert "[ ]RE-REV -> [ ]RE-REV' -> " in cli("status", "q3", "--line", cwd=old).stdout
    assert cli("new", "q4", "--topic", "a run made now", cwd=old).returncode == 0
    assert "[ ]REVISE -> [ ]RE-REVIEW -> [ ]RE-REVISE -> " in cli("status", "q4", "--line", cwd=old).stdout

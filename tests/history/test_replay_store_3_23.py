"""A store recorded by statedir as it landed with academic-pipeline 3.23 (tests/fixtures/
make-store-3.23.sh): under 3.24 its history replays clean, its runs read, a 3.23 run moves on by
3.23's rules, and a 3.23 `new` after a 3.24 run is what an older statedir (or a forger) made."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.support.util import cli, cli_json

FIXTURE = Path(__file__).parent.parent / "fixtures" / "store-3.23.bundle"


@pytest.fixture
def old(isolated: Path) -> Path:
    repo = isolated / "store-3.23"
    subprocess.run(["git", "clone", "-q", str(FIXTURE), str(repo)], check=True)
    return repo


def test_a_3_23_store_verifies_clean_and_its_runs_keep_their_version(old: Path) -> None:
    code, out = cli_json("verify", cwd=old)
    assert code == 0 and out["clean"], out  # type: ignore[index]
    assert cli_json("status", "p1", cwd=old)[1]["pipeline_state"] == "completed"  # type: ignore[index]
    assert cli_json("get", "p2", "template_version", cwd=old)[1] == "3.23"
    assert cli("validate", cwd=old).returncode == 0
    assert cli("stage", "p2", "1", "in_progress", cwd=old).returncode == 0
    assert cli("new", "p3", "--topic", "a run made now", cwd=old).returncode == 0
    assert cli_json("get", "p3", "template_version", cwd=old)[1] == "3.24"
    assert cli_json("get", "p2", "template_version", cwd=old)[1] == "3.23"
    code, out = cli_json("verify", cwd=old)
    assert code == 0 and out["clean"], out  # type: ignore[index]


def test_a_run_made_on_3_23_after_a_3_24_run_is_illegal(old: Path) -> None:
    p2 = subprocess.run(["git", "log", "--format=%H", "--grep=new run p2"], cwd=old, capture_output=True, text=True,
                        check=True).stdout.strip()
    subprocess.run(["git", "reset", "-q", "--hard", f"{p2}~1"], cwd=old, check=True)
    assert cli("new", "p3", "--topic", "a run made on 3.24", cwd=old).returncode == 0
    subprocess.run(["git", "cherry-pick", p2], cwd=old, check=True, capture_output=True)  # p2's `new`, on 3.23
    code, out = cli_json("verify", cwd=old)
    assert code == 1, out
    [finding] = out["findings"]  # type: ignore[index]
    assert finding["kind"] == "illegal" and "version 3.23" in finding["message"] and "p2" in finding["file"]

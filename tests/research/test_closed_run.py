"""A closed research Run takes no more Claims nor a second completion from the CLI either: nothing written."""
from __future__ import annotations

import json
from pathlib import Path

from tests.support.util import cli, snapshot


def test_the_cli_refuses_a_claim_or_a_second_completion_on_a_completed_run(repo: Path, sd: object) -> None:
    store = str(repo / "state")
    run = json.loads(cli("research", "--start-run", "--skill", "s", "--json", "--store", store).stdout)["id"]
    assert cli("research", "--complete-run", "--run-id", run, "--status", "completed", "--store", store).returncode == 0
    saved = snapshot(repo)
    for more in (["--record-claim", "--statement", "x"], ["--complete-run", "--status", "failed"]):
        proc = cli("research", *more, "--run-id", run, "--store", store)
        assert proc.returncode != 0 and "ILLEGAL_TRANSITION" in proc.stdout and "is completed" in proc.stdout
        assert "--start-run" in proc.stdout and "Traceback" not in proc.stderr
    assert snapshot(repo) == saved

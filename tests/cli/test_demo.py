"""`statedir demo`: the example run it drives binds what a real run of the template binds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.util import cli


@pytest.mark.slow  # the demo: a whole run
@pytest.mark.usefixtures("isolated")
def test_the_demo_binds_the_re_review_traceability_row(tmp_path: Path) -> None:
    kept = tmp_path / "demo"
    assert cli("demo", "--keep", str(kept)).returncode == 0
    ars = json.loads(cli("show", "demo-paper", "--format", "ars", "--store", str(kept / "state")).stdout)
    rows = ars["pending_adjudication_activity_bindings"]
    row = next(r for r in rows if r["source_family"] == "re_review_traceability")
    assert row["capture_state"] == "captured", row  # stage 3' ran under its contract: the row is the contract's files
    assert [a["artifact_role"] for a in row["artifacts"]] == ["input_manifest", "precommitment", "verdict_record",
                                                             "traceability"]
    assert cli("verify", "--store", str(kept / "state")).returncode == 0

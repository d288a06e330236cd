"""bench/soak.py in a small configuration: clones of one remote exchanging by statedir sync and
by plain git pull and merge, racing pushes, converge with every accepted transition once."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.util import ROOT


@pytest.mark.slow  # about a minute: some hundred statedir and git processes
def test_a_small_soak_converges_with_every_transition_once() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--clones", "3", "--rounds", "3",
                           "--seed", "7", "--json"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["problems"] == []
    figures = report["figures"]
    assert figures["transitions accepted"] > 0 and figures["merge commits"] > 0

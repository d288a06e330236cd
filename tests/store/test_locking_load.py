"""8 and 16 concurrent writer processes on one run and on different runs: nothing lost, nothing
corrupt, every writer served (the lock is a ticket queue: statedir.store.locking)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.load import check, hammer, prepare
from tests.support.reliability import assert_store_equals_last_commit

pytestmark = pytest.mark.slow  # concurrent writers and lock waits

WRITERS, TRANSITIONS = 8, 6


def test_concurrent_writers(isolated: Path) -> None:
    prepare(isolated, WRITERS)
    results = hammer(isolated, WRITERS, TRANSITIONS)
    figures = check(isolated, results)
    assert figures["accepted"] == WRITERS * TRANSITIONS, [r["stderr"] for r in results if r["code"]]
    assert figures["lost"] == 0 and figures["corrupt"] == 0
    assert figures["commits"] == figures["accepted"] + 2 * (WRITERS + 1)  # plus new + stage per run
    assert_store_equals_last_commit(isolated)


@pytest.mark.parametrize("runs", ["one", "own"])
def test_sixteen_writers_on_one_run_and_on_runs_of_their_own(isolated: Path, runs: str) -> None:
    prepare(isolated, 16)
    results = hammer(isolated, 16, 3, runs=runs)
    figures = check(isolated, results)
    assert figures["accepted"] == 48, [r["stderr"] for r in results if r["code"]]
    assert figures["lost"] == 0 and figures["corrupt"] == 0
    assert figures["commits"] == 48 + 2 * 17  # plus new + stage per run
    assert {r["run_id"] for r in results} == ({"shared"} if runs == "one" else {f"own-{w}" for w in range(16)})
    assert_store_equals_last_commit(isolated)


def test_lock_waits_end_in_a_clean_timeout(isolated: Path) -> None:
    prepare(isolated, 4)
    results = hammer(isolated, 4, 3, timeout=0.01)
    figures = check(isolated, results)
    assert figures["lost"] == 0 and figures["corrupt"] == 0 and figures["other_failures"] == 0
    assert figures["accepted"] + figures["lock_timeouts"] == 12
    assert_store_equals_last_commit(isolated)

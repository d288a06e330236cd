"""A plain sync's short path (statedir.api.sync_unmoved) leaves to the whole sync whatever it reads
of the environment and this path does not check: nothing is looked up for those."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir.api import sync_unmoved


@pytest.mark.parametrize("store, environ", [
    ("", {}), (None, {"STATEDIR_LOCK_TIMEOUT": "1"}), (None, {"STATEDIR_FAULT": "x"}),
    (None, {"STATEDIR_ACTOR": ""}), (None, {"STATEDIR_ACTOR": "two words"}), (None, {"GIT_DIR": "/elsewhere"}),
    (None, {"GIT_CONFIG_COUNT": "1"}),
])
def test_what_it_does_not_check_goes_the_whole_way(tmp_path: Path, store: str | None, environ: dict[str, str]) -> None:
    assert sync_unmoved.answer(store, str(tmp_path), environ) is None


def test_no_store_no_answer(tmp_path: Path) -> None:
    assert sync_unmoved.answer(None, str(tmp_path), {}) is None

"""Fixtures for the CLI's tests: a store in a real git repository."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one)."""
    return repo / "state"

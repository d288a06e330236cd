"""Every test here runs git and the CLI on real repositories (crashed, forged, hostile): each one
isolated (tests/conftest.py)."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(isolated: Path) -> Path:
    return isolated

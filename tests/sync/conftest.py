"""Every test here drives real clones through git and the CLI: each one isolated (tests/conftest.py)."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(isolated: Path) -> Path:
    return isolated

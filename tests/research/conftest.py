"""Fixtures for the research ledger: a store in a real git repository and its Ledger."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from statedir.research import Ledger


@pytest.fixture
def ledger(sd: api.StateDir) -> Ledger:
    return sd.research


@pytest.fixture
def store(sd: api.StateDir) -> Path:
    return sd.store.root

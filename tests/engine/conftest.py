"""The engine tests' fixtures: stage 3' under the re-review contract with its parts' files."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.runs import PARTS, at_re_review
from tests.support.util import copy_of


@pytest.fixture
def at3p(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    sd = copy_of("contract-at-3p", at_re_review, repo, tmp_path_factory)[0]
    for part in PARTS:
        (repo / f"{part}.md").write_text(f"{part} of the re-review\n")
    (repo / "report.json").write_text("{}\n")
    return sd

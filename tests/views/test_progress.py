"""Whole-store validate draws a progress bar on stderr at a terminal, and nothing otherwise."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from statedir import api
from statedir.views import progress
from tests.support.util import cli, on_terminal


def many_files(sd: api.StateDir) -> int:
    """Runs made until the store holds enough files for a bar (a new run writes two)."""
    count, n = 0, 0
    while count < progress.MIN_TOTAL:
        sd.new(f"r{n}", topic="T")
        n += 1
        count = sum(1 for _ in (sd.store.root / "runs").rglob("*.yaml"))
    return count


@pytest.mark.slow  # enough runs made first, then a pseudo-terminal
def test_a_bar_on_a_terminal_and_stdout_untouched(sd: api.StateDir, repo: Path) -> None:
    count = many_files(sd)
    proc, text = on_terminal(["validate", "--json"], repo, "stderr")
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"valid": True, "errors": []}
    assert f"{count + 1}/{count + 1} files" in text and "validating [" in text  # the config file too
    assert text.endswith("\r\x1b[K")  # the line is cleared at the end


@pytest.mark.slow  # enough runs made first for a progress bar
def test_no_bar_when_stderr_is_not_a_terminal(sd: api.StateDir, repo: Path) -> None:
    many_files(sd)
    proc = cli("validate", cwd=repo)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""


def test_the_bar_redraws_once_per_percent_and_skips_small_work() -> None:
    out = io.StringIO()
    bar = progress.Bar("x", out)
    for done in range(1, 5001):
        bar(done, 5000)
    bar.close()
    assert out.getvalue().count("\r") == 101 + 1 and "5000/5000 files" in out.getvalue()
    small = io.StringIO()
    tiny = progress.Bar("x", small)
    for done in range(1, 11):
        tiny(done, 10)
    tiny.close()
    assert small.getvalue() == ""

"""A bus writer killed at every step of its write: the next command sees the session exactly as
the last commit has it (no half write, no committed append lost) and goes on."""
from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from statedir import api, fault_injection
from statedir.engine import validate
from tests.support.util import cli, cli_json

pytestmark = pytest.mark.slow  # crashes injected at every step

S = "2026-06-30-crash"
NEW = "2026-07-01-created-by-the-crashing-command"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("point", fault_injection.POINTS)
@pytest.mark.parametrize("session", [S, NEW])
def test_sigkill_at_every_step(repo: Path, point: str, session: str) -> None:
    api.init(repo / "state")
    api.StateDir(repo / "state").bus(S).append("evidence", ".ai_log/1.md")
    before = git(repo, "rev-parse", "HEAD").strip()
    proc = cli("bus", "append", session, "evidence", ".ai_log/2.md", cwd=repo, env={"STATEDIR_FAULT": point})
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    committed = point == "after_commit"
    assert (git(repo, "rev-parse", "HEAD").strip() != before) == committed

    expected = ([".ai_log/1.md"] if session == S else []) + ([".ai_log/2.md"] if committed else [])
    code, value = cli_json("bus", "get", session, "evidence", cwd=repo)  # an ordinary reader rolls back first
    if session == NEW and not committed:
        assert code == 1  # the session the killed command was creating does not exist
    else:
        assert (code, value) == (0, expected)
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", "state") == ""
    assert validate.store(repo / "state") == []
    assert cli("bus", "append", session, "evidence", ".ai_log/3.md", cwd=repo).returncode == 0
    assert cli_json("bus", "get", session, "evidence", cwd=repo) == (0, [*expected, ".ai_log/3.md"])

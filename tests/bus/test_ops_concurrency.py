"""Many agents at once: real `statedir bus` processes started together lose nothing (the seed's
script, with no lock, keeps only some of their writes)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from statedir.engine import validate
from tests.support.util import cli_json

pytestmark = pytest.mark.slow  # sixteen agents at once

S = "2026-06-30-swarm"
AGENTS = 16


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def start_together(repo: Path, commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Start every command before waiting for any; each waits on a shared go-file so they
    reach the store at the same moment rather than in start-up order."""
    go = repo.parent / "go"
    launcher = ("import os, runpy, sys, time\n"
                f"while not os.path.exists({str(go)!r}): time.sleep(0.001)\n"
                "sys.argv = ['statedir', *sys.argv[1:]]\n"
                "runpy.run_module('statedir', run_name='__main__')\n")
    procs = [subprocess.Popen([sys.executable, "-c", launcher, *args], cwd=repo, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "STATEDIR_LOCK_TIMEOUT": "120"})
             for args in commands]
    go.write_text("")
    done = []
    for args, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    return done


def test_sixteen_agents_appending_and_setting_at_once_lose_nothing(repo: Path) -> None:
    code, _ = cli_json("init", cwd=repo)
    assert code == 0
    code, _ = cli_json("bus", "init", S, cwd=repo)
    assert code == 0
    base = git(repo, "rev-parse", "HEAD").strip()
    commands = []
    for n in range(AGENTS):
        if n % 2 == 0:  # half append to one shared list, half write their own phase entry
            commands.append(["bus", "append", S, "evidence", f".ai_log/agent-{n}.md", "--actor", f"agent-{n}"])
        else:
            commands.append(["bus", "set", S, f"phases.{n}-work.status", "done", "--actor", f"agent-{n}"])
    results = start_together(repo, commands)
    for result in results:
        assert result.returncode == 0, (result.args, result.stderr)

    code, session = cli_json("bus", "get", S, cwd=repo)
    assert code == 0 and isinstance(session, dict)
    assert sorted(session["evidence"]) == sorted(f".ai_log/agent-{n}.md" for n in range(0, AGENTS, 2))
    assert session["phases"] == {f"{n}-work": {"status": "done"} for n in range(1, AGENTS, 2)}
    # one commit per agent, each with its own actor, on a linear history; nothing left uncommitted
    log = git(repo, "log", "--format=%(trailers:key=Statedir-Actor,valueonly)", f"{base}..HEAD").split()
    assert sorted(log) == sorted(f"agent-{n}" for n in range(AGENTS))
    assert git(repo, "rev-list", "--merges", f"{base}..HEAD") == ""
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", "state") == ""
    assert validate.store(repo / "state") == []

"""Helpers for the research ledger tests: the CLI as a subprocess, the store's entity files."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.util import cli


def research(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, Any]:
    """`statedir research ARGS --json` as a subprocess: (exit code, the parsed JSON on stdout)."""
    proc = cli("research", *args, "--json", cwd=cwd, env=env)
    assert proc.stderr == "", proc.stderr  # never a traceback, never noise
    return proc.returncode, json.loads(proc.stdout)


def files(store: Path, folder: str) -> list[str]:
    """The ids of one kind's files in the store."""
    path = store / "research" / folder
    return sorted(p.stem for p in path.glob("*.yaml")) if path.is_dir() else []


def commits(repo: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True,
                              check=True).stdout)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()

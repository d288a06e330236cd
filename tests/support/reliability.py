"""Shared checks for the reliability suite: what "nothing lost, nothing corrupt" means."""
from __future__ import annotations

import subprocess
from pathlib import Path

from statedir import api
from statedir.engine import validate


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def state_commits(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%H", "--", "state").split()


def assert_store_equals_last_commit(repo: Path) -> None:
    """No half transition visible: the store is exactly HEAD, and every file validates."""
    api.StateDir(repo / "state")  # an ordinary reader first: it rolls back a dead writer's half
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", "state") == ""
    assert git(repo, "diff", "HEAD", "--stat", "--", "state") == ""
    assert validate.store(repo / "state") == []


def material_labels(repo: Path, run_id: str) -> list[str]:
    folder = repo / "state" / "runs" / run_id / "materials"
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []

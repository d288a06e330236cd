"""A plain git repository of N run folders, made with git itself (the gitops tests' stores)."""
from __future__ import annotations

import subprocess
from pathlib import Path


def sh(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def store_of(repo: Path, runs: int) -> None:
    sh(repo.parent, "init", "-q", str(repo))
    for n in range(runs):
        folder = repo / "state" / "runs" / f"r{n}" / "stages"
        folder.mkdir(parents=True)
        (folder.parent / "state.yaml").write_text(f"run_id: r{n}\n")
        (folder / "1.yaml").write_text("status: pending\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "runs")

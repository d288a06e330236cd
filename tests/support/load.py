"""Concurrent writers, shared by the load test and the figures script."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from statedir import api


def prepare(repo: Path, writers: int) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    for run_id in ["shared", *(f"own-{w}" for w in range(writers))]:
        sd.new(run_id, topic="load")
        sd.stage(run_id, "1", "in_progress")


def writer(repo: Path, number: int, transitions: int, timeout: float, runs: str = "both") -> list[dict[str, Any]]:
    """One writer process after another: alternately on the shared run and on its own (`runs`
    "both"), or only on the shared run ("one"), or only on its own ("own")."""
    results = []
    env = {**os.environ, "STATEDIR_LOCK_TIMEOUT": str(timeout)}
    for i in range(transitions):
        shared = runs == "one" or (runs == "both" and i % 2 == 0)
        run_id = "shared" if shared else f"own-{number}"
        proc = subprocess.run([sys.executable, "-m", "statedir", "material", run_id, "paper_draft", "--json",
                               "--actor", "pipeline_orchestrator"], cwd=repo, capture_output=True, text=True,
                              env=env)
        out = json.loads(proc.stdout) if proc.stdout.strip() else {}
        results.append({"run_id": run_id, "code": proc.returncode, "out": out, "stderr": proc.stderr})
    return results


def hammer(repo: Path, writers: int, transitions: int, timeout: float = 120.0,
           runs: str = "both") -> list[dict[str, Any]]:
    """`writers` writers at once, each making `transitions` (writer's `runs`)."""
    with ThreadPoolExecutor(max_workers=writers) as pool:
        futures = [pool.submit(writer, repo, w, transitions, timeout, runs) for w in range(writers)]
        return [r for f in futures for r in f.result()]


def check(repo: Path, results: list[dict[str, Any]]) -> dict[str, int]:
    """Every accepted transition: one commit and its files; labels unique and gapless."""
    accepted = [r for r in results if r["code"] == 0]
    log = subprocess.run(["git", "log", "--format=%H", "--", "state/runs"], cwd=repo, capture_output=True,
                         text=True, check=True).stdout.split()
    commits = {r["out"]["commit"] for r in accepted}
    lost = len(accepted) - len(commits & set(log))
    corrupt = 0
    by_run: dict[str, list[str]] = {}
    for r in accepted:
        by_run.setdefault(r["run_id"], []).append(r["out"]["version_label"])
    for run_id, labels in by_run.items():
        expected = [f"paper_draft_v{n}" for n in range(1, len(labels) + 1)]
        on_disk = sorted(p.stem for p in (repo / "state" / "runs" / run_id / "materials").glob("*.yaml"))
        if sorted(labels, key=lambda x: int(x.rsplit("v", 1)[1])) != expected or sorted(expected) != on_disk:
            corrupt += 1
    from statedir.engine import validate

    corrupt += len(validate.store(repo / "state"))
    refused = [r for r in results if r["code"] != 0]
    timeouts = sum(1 for r in refused if r["out"].get("error", {}).get("code") == "LOCK_TIMEOUT")
    return {"accepted": len(accepted), "lost": lost, "corrupt": corrupt, "lock_timeouts": timeouts,
            "other_failures": len(refused) - timeouts, "commits": len(log)}

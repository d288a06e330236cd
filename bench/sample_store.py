"""A sample store of many runs for a trial (the web view, `runs`, `log`, a sync), made in seconds:

    .venv/bin/python bench/sample_store.py DIR [--runs 2000]

Makes DIR a git repository (it must not exist, or be empty) holding a store whose runs stand at
five points of the academic pipeline: just made, in stage 1, at stage 1's checkpoint, paused,
and at stage 2.5's MANDATORY checkpoint. One run of each is made through the API (real
transitions, each a commit); the rest are copies of them under new ids and topics, added in one
commit. `statedir verify` would call that commit a hand edit, so the script acknowledges it
(`statedir verify --acknowledge SHA --reason ...`): verify is clean, and every run moves on by
the rules from where its copy stands. 2,000 runs through the API take about 8 minutes; this
takes about 40 s on a shared two-core machine, most of it the acknowledgement's verify of the
copies (each copied file a finding, 27,531 for 2,000 runs, all acknowledged at once).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from statedir import api

TOPICS = ("Checkpoints in agent pipelines", "Review cycles with AI assistants", "Reproducible literature surveys",
          "Integrity checks of citations", "Human answers in automated research")


def _made(sd: api.StateDir, run: str) -> None:
    sd.new(run, topic="t")


def _in_stage_one(sd: api.StateDir, run: str) -> None:
    sd.new(run, topic="t")
    sd.stage(run, "1", "in_progress")
    sd.material(run, ["rq_brief", "bibliography"])


def _at_checkpoint(sd: api.StateDir, run: str) -> None:
    _in_stage_one(sd, run)
    sd.material(run, ["methodology_blueprint", "synthesis_report"])
    sd.stage(run, "1", "completed")


def _paused(sd: api.StateDir, run: str) -> None:
    _in_stage_one(sd, run)
    sd.pipeline(run, "paused", reason="waiting for the co-author")


def _at_mandatory(sd: api.StateDir, run: str) -> None:
    sd.new(run, topic="t", entry_point="2.5")
    sd.material(run, ["paper_draft"])
    sd.stage(run, "2.5", "in_progress")
    sd.integrity(run, "2.5", "PASS", refs_total=12, refs_verified=12, actor="integrity_verification")
    sd.checklist(run, "2.5", [f"{mode}=CLEAR" for mode in range(1, 8)], actor="integrity_verification")
    sd.stage(run, "2.5", "completed")


KINDS: tuple[Callable[[api.StateDir, str], None], ...] = (_made, _in_stage_one, _at_checkpoint, _paused,
                                                          _at_mandatory)


def _copy(root: Path, source: str, run: str, topic: str) -> None:
    """Run `source`'s folder as `run`: its id and topic in state.yaml and its first log entry."""
    target = root / "runs" / run
    shutil.copytree(root / "runs" / source, target)
    state = target / "state.yaml"
    state.write_text(state.read_text().replace(f"run_id: {source}\n", f"run_id: {run}\n")
                     .replace("topic: t\n", f"topic: {topic}\n"))
    for log in (target / "history" / "transitions").glob("*.yaml"):
        log.write_text(log.read_text().replace(f"new run {source} ", f"new run {run} "))


def make(where: Path, runs: int) -> dict[str, object]:
    if where.exists() and any(where.iterdir()):
        raise SystemExit(f"{where} exists and is not empty: give a new folder")
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    root = where / "state"
    api.init(root)
    sd = api.StateDir(root)
    models = [f"sample-{n}" for n in range(len(KINDS))]
    for build, model in zip(KINDS, models, strict=True):
        build(sd, model)
    for n in range(runs - len(models)):
        _copy(root, models[n % len(models)], f"paper-{n + 1:05d}", f"{TOPICS[n % len(TOPICS)]} ({n + 1})")
    if runs > len(models):
        git = ["git", "-C", str(where)]
        known = subprocess.run([*git, "config", "user.email"], capture_output=True, text=True).stdout.strip()
        if not known:  # a machine without a git identity (a container): the copies' commit names the script
            git += ["-c", "user.name=bench/sample_store.py", "-c", "user.email=sample-store@statedir.invalid"]
        subprocess.run([*git, "add", "-A", "state"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"sample store: {runs - len(models)} runs copied"], check=True)
        sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        sd.acknowledge(sha, reason="a sample store: runs copied by bench/sample_store.py, each as its model stood")
    return {"store": str(root), "runs": max(runs, len(models)), "verify_clean": sd.verify()["clean"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("where", type=Path, help="a new folder: the repository to make")
    parser.add_argument("--runs", type=int, default=2000, help="how many runs (at least the five models)")
    args = parser.parse_args()
    started = time.monotonic()
    made = make(args.where.resolve(), args.runs)
    print(f"{made['runs']} runs in {made['store']} in {time.monotonic() - started:.1f} s; "
          f"verify clean: {made['verify_clean']}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Helpers of the web tests: a store with something on every page, and `statedir serve` as a
real subprocess on a free port."""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from statedir import api


def fill(root: Path) -> dict[str, str]:
    """Runs (one waiting at a checkpoint, one further on), a bus session and a research chain."""
    sd = api.StateDir(root)
    sd.new("paper-a", topic="Checkpoints in agent pipelines")
    sd.stage("paper-a", "1", "in_progress")
    sd.material("paper-a", ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"])
    sd.stage("paper-a", "1", "completed")  # the FULL checkpoint after stage 1 is open
    sd.new("paper-b", topic="A second paper")
    sd.pipeline("paper-b", "paused", reason="waiting for the co-author")
    sd.bus("2026-06-30-member-blog").set("phases.0-requirements.status", "done")
    ledger = sd.research
    project = ledger.create_project("Quality assurance")["id"]
    question = ledger.create_question("Does AI change QA?", project_id=project)["id"]
    hypothesis = ledger.create_hypothesis(question, "It shortens review cycles")["id"]
    run = ledger.start_run("deep-research", question_id=question)["id"]
    ledger.record_result(run, "Twelve studies found")
    ledger.record_claim(run, "Review cycles are shorter", confidence="medium")
    return {"project": project, "question": question, "hypothesis": hypothesis, "research_run": run}


@contextlib.contextmanager
def serving(store: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """`statedir serve --port 0` on `store` until the block ends; yields the address it printed."""
    proc = subprocess.Popen([sys.executable, "-P", "-m", "statedir", "serve", "--port", "0", "--store", str(store),
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://\S+", line)
        assert found, f"serve printed {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
        yield found.group(0)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

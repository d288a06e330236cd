"""How long history commands take on a long history. Run from the repository root:

    .venv/bin/python bench/history.py [--transitions 1000] [--runs 10] [--repeat 3]

Builds a store in a temp dir whose runs make `--transitions` transitions between them (a
cycle of material registrations, pauses, resumes and topic changes that the rules accept
forever), then times the real CLI: `verify` of the whole store, `log`, and `show --at` of the
oldest transition. Prints the medians and how many git processes `verify` started.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from statedir import api

BIN = Path(sys.executable).parent / "statedir"


def build(repo: Path, transitions: int, runs: int) -> str:
    """The store; returns the commit of the first transition after `new`."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    ids = [f"run-{n:03d}" for n in range(runs)]
    for run_id in ids:
        sd.new(run_id, topic="a topic")
        sd.stage(run_id, "1", "in_progress")
    cycle = [
        lambda r: sd.material(r, ["rq_brief"]),
        lambda r: sd.pipeline(r, "paused", reason="a break"),
        lambda r: sd.pipeline(r, "running"),
        lambda r, n=[0]: sd.set(r, "topic", f"topic {n.__setitem__(0, n[0] + 1) or n[0]}", reason="sharper"),
    ]
    first = ""
    done = 2 * runs
    step = 0
    while done < transitions:
        result = cycle[step % len(cycle)](ids[(step // len(cycle)) % runs])
        first = first or result["commit"]
        step += 1
        done += 1
    return first


def timed(args: list[str], cwd: Path, repeat: int, env: dict[str, str] | None = None) -> tuple[float, bytes]:
    times = []
    out = b""
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([str(BIN), *args], cwd=cwd, capture_output=True, env={**os.environ, **(env or {})})
        times.append(time.perf_counter() - start)
        out = proc.stdout
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transitions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        start = time.perf_counter()
        first = build(repo, opts.transitions, opts.runs)
        built = time.perf_counter() - start
        verify, out = timed(["verify", "--json"], repo, opts.repeat)
        result = json.loads(out)
        assert result["clean"], result["findings"][:3]
        trace = repo.parent / f"{repo.name}.trace"
        timed(["verify", "--json"], repo, 1, {"GIT_TRACE2_EVENT": str(trace)})
        processes = sum(1 for line in trace.read_text().splitlines() if json.loads(line)["event"] == "start")
        trace.unlink()
        one_run, _ = timed(["verify", "run-000", "--json"], repo, opts.repeat)
        log, _ = timed(["log", "--json"], repo, opts.repeat)
        show_at, _ = timed(["show", "run-000", "--at", first, "--json"], repo, opts.repeat)
        floor, _ = timed(["runs", "--json"], repo, opts.repeat)  # a command that reads no history
        print(f"store: {opts.runs} runs, {opts.transitions} transitions ({result['checked']} commits with init), "
              f"built in {built:.1f} s")
        print(f"verify (whole store)       {verify:6.2f} s   clean, {processes} git processes, "
              f"{1000 * verify / result['checked']:.1f} ms a commit")
        print(f"verify run-000             {one_run:6.2f} s")
        print(f"log --json                 {log:6.2f} s")
        print(f"show --at (oldest commit)  {show_at:6.2f} s")
        print(f"runs --json (start-up floor, for scale) {floor:6.2f} s; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

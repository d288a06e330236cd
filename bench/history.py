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


CPU: list[float] = []  # CPU seconds (user + system, the command and its git processes) of the last timed()


def timed(args: list[str], cwd: Path, repeat: int, env: dict[str, str] | None = None) -> tuple[float, bytes]:
    """Median wall time of the command; its median CPU time lands in CPU[0]: on a shared, busy
    machine the CPU time is the steadier figure."""
    import resource

    times, cpu = [], []
    out = b""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([str(BIN), *args], cwd=cwd, capture_output=True, env={**os.environ, **(env or {})})
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        out = proc.stdout
    CPU[:] = [statistics.median(cpu)]
    return statistics.median(times), out


def options(doc: str) -> argparse.Namespace:
    """--transitions, --runs, --repeat: the long history a bench builds and how often it times."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--transitions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    return parser.parse_args()


def main() -> None:
    opts = options(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        start = time.perf_counter()
        first = build(repo, opts.transitions, opts.runs)
        built = time.perf_counter() - start
        verify, out = timed(["verify", "--json"], repo, opts.repeat)
        verify_cpu = CPU[0]
        result = json.loads(out)
        assert result["clean"], result["findings"][:3]
        trace = repo.parent / f"{repo.name}.trace"
        timed(["verify", "--json"], repo, 1, {"GIT_TRACE2_EVENT": str(trace)})
        processes = sum(1 for line in trace.read_text().splitlines() if json.loads(line)["event"] == "start")
        trace.unlink()
        one_run, _ = timed(["verify", "run-000", "--json"], repo, opts.repeat)
        one_run_cpu = CPU[0]
        log, _ = timed(["log", "--json"], repo, opts.repeat)
        log_cpu = CPU[0]
        show_at, _ = timed(["show", "run-000", "--at", first, "--json"], repo, opts.repeat)
        show_cpu = CPU[0]
        floor, _ = timed(["runs", "--json"], repo, opts.repeat)  # a command that reads no history
        floor_cpu = CPU[0]
        print(f"store: {opts.runs} runs, {opts.transitions} transitions ({result['checked']} commits with init), "
              f"built in {built:.1f} s")
        print(f"{'command':<40} {'wall':>8} {'cpu':>8}")
        for name, wall, cpu in [("verify (whole store)", verify, verify_cpu), ("verify run-000", one_run, one_run_cpu),
                                ("log --json", log, log_cpu), ("show run-000 --at <oldest> --json", show_at, show_cpu),
                                ("runs --json (start-up floor, for scale)", floor, floor_cpu)]:
            print(f"{name:<40} {wall:7.2f}s {cpu:7.2f}s")
        print(f"verify: clean, {processes} git processes, {1000 * verify_cpu / result['checked']:.1f} ms CPU a commit;"
              f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

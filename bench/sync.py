"""The cost of `statedir sync` and of the merge driver. Run from the repository root:

    .venv/bin/python bench/sync.py [--runs 1000] [--changed 10] [--rounds 3] [--repeat 15]

Builds a bare remote and two clones in a temp dir: a store of RUNS runs; in each round both
clones make CHANGED transitions on runs of their own, one clone syncs (pushes), and the other's
`statedir sync` (fetch, merge with the driver, validate, verify, push) is timed. Then the
driver's time per file: `statedir merge-driver` as git runs it (a process per file) and the
merge alone in this process, for a state file and a 1,000-entry log.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import statedir
from statedir import api
from statedir.files import yaml
from statedir.merge import driver
from statedir.store import layout

PY = sys.executable


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(list(args), cwd=cwd, check=True, capture_output=True, text=True).stdout


CPU: list[float] = []  # CPU seconds (user + system, git's processes included) of each timed call


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cwd: Path, *args: str) -> float:
    """Wall seconds of one `statedir` process; its CPU seconds go to CPU (on a shared machine
    the wall time is mostly waiting for a core)."""
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run([PY, "-m", "statedir", *args], cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    CPU.append(children_cpu() - cpu)
    if proc.returncode != 0:
        raise SystemExit(f"statedir {' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return elapsed


def build(tmp: Path, runs: int) -> tuple[Path, Path]:
    remote = tmp / "remote.git"
    sh(tmp, "git", "init", "-q", "--bare", "-b", "main", str(remote))
    a, b = tmp / "a", tmp / "b"
    sh(tmp, "git", "clone", "-q", str(remote), str(a))
    api.init(a / "state")
    sd = statedir.open(a / "state")
    sd.new("r0000", topic="run 0")
    # The other runs are copies of the first, made in one commit (sync verifies only the commits
    # it brings in, so the base history need not be transitions; validate reads every run).
    first = a / "state" / "runs" / "r0000"
    for n in range(1, runs):
        target = first.parent / f"r{n:04d}"
        for path in first.rglob("*.yaml"):
            dest = target / path.relative_to(first)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(path.read_text().replace("r0000", f"r{n:04d}"))
    sh(a, "git", "add", "state/runs")
    sh(a, "git", "commit", "-q", "-m", f"bench: {runs - 1} copies of run r0000")
    sh(a, "git", "push", "-q", "-u", "origin", "HEAD:main")
    sh(tmp, "git", "clone", "-q", str(remote), str(b))
    timed(b, "doctor", "--fix")
    return a, b


def sync_rounds(a: Path, b: Path, changed: int, rounds: int) -> list[float]:
    times = []
    sa, sb = statedir.open(a / "state"), statedir.open(b / "state")
    fields = ("topic", "language")
    for r in range(rounds):
        for n in range(changed):
            sa.set(f"r{n:04d}", fields[0], f"a round {r}", reason=f"a{r}")
            sb.set(f"r{changed + n:04d}", fields[1], f"b{r}", reason=f"b{r}")
        timed(a, "sync")
        times.append(timed(b, "sync"))
        SYNC_CPU.append(CPU[-1])
        timed(a, "sync")
    return times


SYNC_CPU: list[float] = []


def driver_cost(tmp: Path, repeat: int) -> dict[str, float]:
    ref = layout.schema_ref("runs/r1/state.yaml")
    state = {"run_id": "r1", "template": "academic-pipeline", "topic": "t", "language": "en",
             "checkpoints_opened": 0, "updated_at": "2026-01-01T00:00:00Z"}
    triples = {
        "state.yaml": ("runs/r1/state.yaml", [yaml.dump(s, ref).encode() for s in (
            state, {**state, "topic": "A", "updated_at": "2026-01-02T00:00:00Z"},
            {**state, "language": "de", "checkpoints_opened": 1})]),
    }
    log_ref = layout.schema_ref("runs/r1/history/transitions.yaml")
    entry = {"at": "2026-01-01T00:00:00Z", "actor": "a", "action": "stage", "summary": "s", "reason": None}
    common = [{**entry, "at": f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"} for n in range(1000)]
    side = [yaml.header(log_ref) + "".join(yaml.dump_entry(e) for e in common + extra).encode().decode()
            for extra in ([], [{**entry, "at": "2026-01-02T00:00:00Z", "reason": "A"}],
                          [{**entry, "at": "2026-01-02T00:00:00Z", "reason": "B"}])]
    triples["log, 1,000 entries"] = ("runs/r1/history/transitions.yaml", [s.encode() for s in side])
    out = {}
    for name, (rel, (base, ours, theirs)) in triples.items():
        def once(rel: str = rel, base: bytes = base, ours: bytes = ours, theirs: bytes = theirs) -> float:
            start = time.perf_counter()
            assert driver.merge_file(rel, base, ours, theirs).clean
            return time.perf_counter() - start
        once()
        out[f"merge alone, {name}"] = statistics.median(once() for _ in range(repeat))
        work = tmp / "driver"
        work.mkdir(exist_ok=True)
        (work / "statedir.yaml").write_text("")  # the driver finds the store by this file
        paths = []
        for label, raw in (("O", base), ("A", ours), ("B", theirs)):
            (work / label).write_bytes(raw)
            paths.append(str(work / label))
        cost, cpu = [], []
        for _ in range(max(3, repeat // 3)):
            (work / "A").write_bytes(ours)
            before, start = children_cpu(), time.perf_counter()
            subprocess.run([PY, "-m", "statedir", "merge-driver", *paths, rel], cwd=work, check=True)
            cost.append(time.perf_counter() - start)
            cpu.append(children_cpu() - before)
        out[f"merge-driver process, {name}"] = statistics.median(cost)
        out[f"merge-driver process CPU, {name}"] = statistics.median(cpu)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    env = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    os.environ.update(env)
    tmp = Path(tempfile.mkdtemp(prefix="statedir-bench-sync-"))
    try:
        start = time.perf_counter()
        a, b = build(tmp, args.runs)
        print(f"store: {args.runs} runs, built in {time.perf_counter() - start:.1f} s")
        times = sync_rounds(a, b, args.changed, args.rounds)
        print(f"sync, {args.changed} runs changed on each side: median {statistics.median(times):.2f} s "
              f"over {len(times)} rounds ({', '.join(f'{t:.2f}' for t in times)}); "
              f"CPU median {statistics.median(SYNC_CPU):.2f} s")
        for name, seconds in driver_cost(tmp, args.repeat).items():
            print(f"{name}: {seconds * 1000:.1f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Handoff-bus figures: one `statedir bus` command as a process, one Bus call in process, and
16 agents appending at once. Prints medians; run with `python bench/bus.py [N]`.

With STATEDIR_SEED_SCRIPT naming a copy of the seed's pipeline-state.sh (needs jq), the
same appends through it are timed too, for context (it has no lock and makes no commit).
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

S = "2026-11-30-bench"


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main(n: int) -> None:
    import statedir
    from statedir import api

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
            subprocess.run(["git", "config", key, value], cwd=repo, check=True)
        api.init(repo / "state")
        cli = [sys.executable, "-m", "statedir", "bus"]
        timed([*cli, "init", S], repo)
        append = [timed([*cli, "append", S, "evidence", f".ai_log/{i}.md"], repo) for i in range(n)]
        get = [timed([*cli, "get", S, "evidence"], repo) for _ in range(n)]
        bus = statedir.open(repo / "state").bus(S)
        in_process = []
        for i in range(n):
            start = time.perf_counter()
            bus.append("phases.1-work.evidence", f".ai_log/{i}.md")
            in_process.append(time.perf_counter() - start)
        start = time.perf_counter()
        procs = [subprocess.Popen([*cli, "append", S, "swarm", f"agent-{i}"], cwd=repo,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(16)]
        codes = [p.wait() for p in procs]
        swarm = time.perf_counter() - start
        kept = len(bus.get("swarm") or [])
        print(f"bus append, CLI process:  median {statistics.median(append) * 1000:6.0f} ms  (n={n}, one commit each)")
        print(f"bus get, CLI process:     median {statistics.median(get) * 1000:6.0f} ms")
        print(f"Bus.append, in process:   median {statistics.median(in_process) * 1000:6.0f} ms")
        print(f"16 agents appending at once: {swarm:5.2f} s wall, exit codes {sorted(set(codes))}, "
              f"{kept}/16 values kept")
        seed = os.environ.get("STATEDIR_SEED_SCRIPT")
        if seed:
            times = [timed(["bash", seed, "append", S, "evidence", f".ai_log/{i}.md"], repo) for i in range(n)]
            print(f"seed script append:       median {statistics.median(times) * 1000:6.0f} ms  (no lock, no commit)")
            procs = [subprocess.Popen(["bash", seed, "append", S, "swarm", f"agent-{i}"], cwd=repo,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(16)]
            for p in procs:
                p.wait()
            out = subprocess.run(["bash", seed, "get", S, "swarm"], cwd=repo, capture_output=True, text=True).stdout
            print(f"seed script, 16 at once:  {out.count('agent-')}/16 values kept")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)

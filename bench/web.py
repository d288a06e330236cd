"""Time to first byte of `statedir serve`'s pages at 100 and 10,000 runs. Run from the repository root:

    .venv/bin/python bench/web.py [--sizes 100,10000] [--repeat 15]

Builds each store in a temp dir (one run made through the API, copied under new ids, one
commit), starts `statedir serve` as a subprocess and measures, over a real socket, the time
from sending a request to the first byte of the answer. The runs page opens only the runs it
shows; a state filter answers within half a second with what it found (a filter that
matches nothing reads every run once over the pages that follow), then from memory: what a
page read is kept while HEAD stands and, when it moves, for every run the move did not touch.
"""
from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from statedir import api

BIN = Path(sys.executable).parent / "statedir"


def make_store(where: Path, runs: int) -> Path:
    repo = where / f"repo-{runs}"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    root = repo / "state"
    api.init(root)
    sd = api.StateDir(root)
    sd.new("r00001", topic="A paper")
    sd.stage("r00001", "1", "in_progress")
    sd.pipeline("r00001", "paused", reason="bench")
    template = root / "runs" / "r00001"
    for n in range(2, runs + 1):
        run_id = f"r{n:05d}"
        shutil.copytree(template, root / "runs" / run_id)
        state = root / "runs" / run_id / "state.yaml"
        state.write_text(state.read_text().replace("run_id: r00001\n", f"run_id: {run_id}\n"))
    subprocess.run(["git", "add", "-A", "state"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"{runs} runs"], cwd=repo, check=True)
    return root


def first_byte(port: int, path: str) -> float:
    """Seconds from sending GET `path` to the first byte of the answer (the whole body is read after)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.connect()
    start = time.perf_counter()
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
    response = conn.getresponse()  # returns once the status line has arrived
    elapsed = time.perf_counter() - start
    assert response.status == 200, (path, response.status)
    response.read()
    conn.close()
    return elapsed


def follow(port: int, state: str) -> float:
    """Seconds to follow a state filter's 'Search further' links until the listing ends."""
    start, path = time.perf_counter(), f"/?state={state}"
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
        page = conn.getresponse().read().decode()
        conn.close()
        found = re.search(r'rel="next" href="([^"]+)"', page)
        if not found:
            return time.perf_counter() - start
        path = found.group(1).replace("&amp;", "&")


def measure(root: Path, repeat: int) -> list[tuple[str, float]]:
    proc = subprocess.Popen([str(BIN), "serve", "--port", "0", "--store", str(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(re.search(r":(\d+)/", proc.stdout.readline()).group(1))  # type: ignore[union-attr]
        rows = [("runs page, first request of a fresh server", first_byte(port, "/"))]
        rows.append(("runs page, again (median)", statistics.median(first_byte(port, "/") for _ in range(repeat))))
        last = sorted(p.name for p in (root / "runs").iterdir())[-60]
        rows.append(("runs page, the last page (median)",
                     statistics.median(first_byte(port, f"/?after={last}") for _ in range(repeat))))
        rows.append(("a state filter no run matches, first page (answers within its 0.5 s budget)",
                     first_byte(port, "/?state=aborted")))
        rows.append(("  the same filter followed to the end, in all (every run read once)", follow(port, "aborted")))
        rows.append(("  the same filter again, first page (median)",
                     statistics.median(first_byte(port, "/?state=aborted") for _ in range(repeat))))
        subprocess.run([str(BIN), "pipeline", "r00001", "running", "--store", str(root)], check=True,
                       capture_output=True)
        rows.append(("runs page after a transition moved HEAD", first_byte(port, "/")))
        rows.append(("a run's page (median)", statistics.median(first_byte(port, "/runs/r00001")
                                                                for _ in range(repeat))))
        rows.append(("a run's history with verify (median)",
                     statistics.median(first_byte(port, "/runs/r00001/history") for _ in range(max(3, repeat // 3)))))
        return rows
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,10000", help="store sizes in runs, comma-separated")
    parser.add_argument("--repeat", type=int, default=15)
    opts = parser.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "bench")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for size in (int(s) for s in opts.sizes.split(",")):
            built = time.perf_counter()
            root = make_store(Path(tmp), size)
            print(f"# a {size:,}-run store built in {time.perf_counter() - built:.0f} s", file=sys.stderr)
            results[size] = measure(root, opts.repeat)
        sizes = list(results)
        print(f"{'time to first byte (ms)':<78}" + "".join(f"{f'{s:,} runs':>14}" for s in sizes))
        for i, (label, _) in enumerate(results[sizes[0]]):
            print(f"{label:<78}" + "".join(f"{results[s][i][1] * 1000:>14.1f}" for s in sizes))


if __name__ == "__main__":
    main()

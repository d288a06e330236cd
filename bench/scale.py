"""Flat at any size: each command in a big store against the same command in a small one, in
one run. Run from the repository root:

    .venv/bin/python bench/scale.py [--runs 10000] [--commits 100000] [--repeat 9] [--writers 1,4,16]

Builds two stores with bench/scale_store.py (a big one of RUNS runs and COMMITS commits, a small
one of 10 runs and 100 commits; in both, r3 made by 250 transitions of its own before the rest,
whose history page shows the newest 200), each with a bare remote, and times every row in both,
in turn (big, small, big, small ...): the ratio printed is the median of the pair-by-pair
ratios, which keeps the shared machine's drift out of it. Rows starting `git:` are git's own
commands in the same stores, context rather than targets. Then the no-op sync against `git
fetch` in its own store (in turn, the ratio the median of the pairs': issue 37's target is the
big store's), and the concurrency table: W writers at once in the big store, each making K CLI
transitions (on runs of their own, then all on one run).
"""
from __future__ import annotations

import argparse
import http.client
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import statedir  # noqa: E402
from scale_store import build, sh  # noqa: E402

BIN = str(Path(sys.executable).parent / "statedir")
LONG = 250  # r3's commits in both stores, all older than the big store's synthetic ones: its page shows the newest 200
Action = Callable[[int], object]


def run(repo: Path, *args: str, ok: tuple[int, ...] = (0,)) -> None:
    proc = subprocess.run([BIN, *args], cwd=repo, capture_output=True)
    if proc.returncode not in ok:
        raise SystemExit(f"statedir {' '.join(args)} failed in {repo}: {proc.stdout[-500:]!r}{proc.stderr[-500:]!r}")


def paired(big: Action, small: Action, repeat: int) -> tuple[float, float, float]:
    big(-1)
    small(-1)
    a, b = [], []
    for i in range(repeat):
        for side, out in ((big, a), (small, b)):
            if hasattr(side, "prepare"):  # untimed: what the timed call follows (a transition before verify)
                side.prepare(i)
            start = time.perf_counter()
            side(i)
            out.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b, strict=True))


def with_remote(repo: Path) -> None:
    remote = repo.parent / f"{repo.name}.git"
    sh(["git", "clone", "-q", "--bare", str(repo), str(remote)], cwd=repo.parent)
    sh(["git", "remote", "add", "origin", str(remote)], cwd=repo)
    sh(["git", "fetch", "-q", "origin"], cwd=repo)
    sh(["git", "branch", "-q", "--set-upstream-to=origin/main", "main"], cwd=repo)


class Server:
    """`statedir serve` on a store, for its history page."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen([BIN, "serve", "--port", "0", "--store", str(repo / "state")],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port = int(re.search(r":(\d+)/", self.proc.stdout.readline()).group(1))  # type: ignore[union-attr]

    def get(self, path: str) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}"})
        response = conn.getresponse()
        response.read()
        conn.close()
        assert response.status == 200, (path, response.status)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def rows(big: Path, small: Path) -> list[tuple[str, Callable[[Path], Action], str]]:
    """(what, a function of the store giving the action, target)."""
    handles: dict[tuple[Path, bool], statedir.StateDir] = {}
    servers: dict[Path, Server] = {}

    def handle(repo: Path, inprocess: bool) -> statedir.StateDir:
        key = (repo, inprocess)
        if key not in handles:
            handles[key] = statedir.open(repo / "state", inprocess_git=inprocess)
        return handles[key]

    def server(repo: Path) -> Server:
        if repo not in servers:
            servers[repo] = Server(repo)
        return servers[repo]

    def git_commit(repo: Path) -> Action:
        def action(i: int) -> None:
            (repo / "notes.txt").write_text(f"{i}\n")
            sh(["git", "add", "notes.txt"], cwd=repo)
            sh(["git", "commit", "-q", "-m", f"notes {i}"], cwd=repo)
        return action

    def verify_after_one(repo: Path) -> Action:
        def action(i: int) -> None:
            run(repo, "verify", ok=(0, 1))  # 1: the synthetic commits' findings (bench/scale_store.py)
        action.prepare = lambda i: handle(repo, False).set("r1", "topic", f"v {i}", reason="b")  # type: ignore[attr-defined]
        return action

    rows.servers = servers  # type: ignore[attr-defined]
    return [
        ("status RUN", lambda r: lambda i: run(r, "status", "r2"), "<= 1.1"),
        ("next RUN", lambda r: lambda i: run(r, "next", "r2"), "<= 1.1"),
        ("CLI set (a transition)", lambda r: lambda i: run(r, "set", "r1", "topic", f"cli {i}", "--reason", "b"),
         "<= 1.3"),
        ("API sd.set (git processes)", lambda r: lambda i: handle(r, False).set("r1", "topic", f"api {i}", reason="b"),
         "<= 1.3"),
        ("API sd.set (in-process libgit2)",
         lambda r: lambda i: handle(r, True).set("r1", "topic", f"lib {i}", reason="b"), "<= 1.3"),
        ("API sd.new", lambda r: lambda i: handle(r, False).new(f"n{i + 1}-{time.monotonic_ns()}", topic="new"),
         "<= 1.3"),
        ("verify --since HEAD~10", lambda r: lambda i: run(r, "verify", "--since", "HEAD~10"), "<= 1.5"),
        ("verify (whole), one transition new", verify_after_one, "<= 1.5"),
        ("log RUN", lambda r: lambda i: run(r, "log", "r1"), "<= 2"),
        ("git: git log -- state/runs/RUN",
         lambda r: lambda i: sh(["git", "log", "--format=%H %s", "--", "state/runs/r1"], cwd=r), "-"),
        ("web: a run's history page", lambda r: lambda i: server(r).get("/runs/r1/history"), "<= 2"),
        (f"web: history page, {LONG} commits", lambda r: lambda i: server(r).get("/runs/r3/history"), "<= 2"),
        ("no-op sync (local bare remote)", lambda r: lambda i: run(r, "sync"), "-"),
        ("git: git fetch (same remote)", lambda r: lambda i: sh(["git", "fetch", "-q", "origin"], cwd=r), "-"),
        ("git: git add + git commit", git_commit, "-"),
    ]


def concurrency(repo: Path, writers: int, each: int, one_run: bool) -> tuple[float, float, float, int, int]:
    """(transitions a second, p95 latency, longest latency, transitions lost, refused): lost is
    an accepted transition with no commit, or a commit more than were accepted."""
    before = int(sh(["git", "rev-list", "--count", "HEAD"], cwd=repo))
    latencies: list[float] = []
    failed = [0]

    def writer(w: int) -> None:
        target = "r1" if one_run else f"r{w + 2}"
        for k in range(each):
            start = time.perf_counter()
            proc = subprocess.run([BIN, "set", target, "topic", f"w{w} k{k}", "--reason", "c"], cwd=repo,
                                  capture_output=True)
            latencies.append(time.perf_counter() - start)
            failed[0] += proc.returncode != 0
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    made = int(sh(["git", "rev-list", "--count", "HEAD"], cwd=repo)) - before
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    return made / elapsed, p95, latencies[-1], abs(writers * each - failed[0] - made), failed[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--commits", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--writers", default="1,4,16")
    parser.add_argument("--each", type=int, default=10)
    parser.add_argument("--only", default="", help="run only the rows whose name contains this (several: "
                        "comma-separated; 'concurrency' for that table)")
    args = parser.parse_args()
    only = [part for part in args.only.split(",") if part]
    tmp = Path(tempfile.mkdtemp(prefix="statedir-scale-"))
    start = time.perf_counter()
    big = build(tmp / "big", args.runs, args.commits, long=LONG)
    small = build(tmp / "small", 10, 100, long=LONG)
    for repo in (big, small):
        with_remote(repo)
        for n in range(10):  # statedir commits for verify --since HEAD~10
            run(repo, "set", "r1", "topic", f"warm {n}", "--reason", "bench")
    print(f"stores built in {time.perf_counter() - start:.0f} s ({args.runs} runs / {args.commits} commits "
          f"against 10 / 100; r3's {LONG} commits in both) in {tmp}\n")
    print(f"{'operation':34} {'big':>10} {'small':>10} {'big/small':>9}  target")
    table = rows(big, small)
    try:
        for what, make, target in table:
            if only and not any(part in what for part in only):
                continue
            a, b, ratio = paired(make(big), make(small), args.repeat)
            met = "" if target == "-" else ("  met" if ratio <= float(target.split()[-1]) else "  NOT MET")
            print(f"{what:34} {a * 1000:8.1f}ms {b * 1000:8.1f}ms {ratio:8.2f}x  {target}{met}", flush=True)
    finally:
        for server in getattr(rows, "servers", {}).values():
            server.stop()
    if not only or any(part in "no-op sync against git fetch" for part in only):
        print(f"\n{'no-op sync against git fetch':34} {'sync':>10} {'git fetch':>10} {'ratio':>9}  target")
        for label, repo in (("big", big), ("small", small)):
            a, b, ratio = paired(lambda i, r=repo: run(r, "sync"),
                                 lambda i, r=repo: sh(["git", "fetch", "-q", "origin"], cwd=r), args.repeat)
            met = "  met" if ratio <= 2 else "  NOT MET"
            print(f"{label:34} {a * 1000:8.1f}ms {b * 1000:8.1f}ms {ratio:8.2f}x  <= 2{met}", flush=True)
    if only and "concurrency" not in only:
        return
    print(f"\n{'writers (x ' + str(args.each) + ' CLI sets)':26} {'runs':>8} {'per s':>7} {'p95':>8} {'max':>8} "
          f"{'lost':>5} {'refused':>7}")
    for one_run in (False, True):
        for writers in (int(w) for w in args.writers.split(",")):
            rate, p95, worst, lost, refused = concurrency(big, writers, args.each, one_run)
            print(f"{writers:<26} {'one' if one_run else 'own':>8} {rate:7.1f} {p95:7.2f}s {worst:7.2f}s {lost:5} {refused:7}",
                  flush=True)


if __name__ == "__main__":
    main()

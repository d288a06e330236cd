"""The cost of a store on a branch of its own (`init --branch`) against one on the user's branch.
Run from the repository root:

    .venv/bin/python bench/branch.py [--writes 40]

Makes both stores in a temp dir (a user repository with a commit, a store in each mode) and
prints the median wall time of one bus write (one commit) through the API and through the
CLI, the two modes taken in turn (A B A B ...).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import statedir

BIN = Path(sys.executable).parent / "statedir"
SESSION = "2026-06-30-bench"


def user_repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "config", key, value], cwd=root, check=True)
    (root / "README.md").write_text("the user's work\n")
    subprocess.run(["git", "add", "README.md"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=root, check=True)
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, own = user_repo(Path(tmp) / "plain"), user_repo(Path(tmp) / "own")
        statedir.init(plain / "state")
        statedir.init(own / "state", branch="statedir-state")
        stores = {"user's branch": statedir.open(plain / "state"), "branch of its own": statedir.open(own / "state")}
        for sd in stores.values():
            sd.bus(SESSION).init()
        api: dict[str, list[float]] = {name: [] for name in stores}
        cli: dict[str, list[float]] = {name: [] for name in stores}
        for n in range(args.writes):
            for name, sd in stores.items():
                start = time.perf_counter()
                sd.bus(SESSION).set("field", f"api {n}")
                api[name].append(time.perf_counter() - start)
            for name, root in (("user's branch", plain), ("branch of its own", own)):
                start = time.perf_counter()
                subprocess.run([str(BIN), "bus", "set", SESSION, "field", f"cli {n}"], cwd=root, check=True,
                               stdout=subprocess.DEVNULL, env=os.environ)
                cli[name].append(time.perf_counter() - start)
        print(f"one bus write (one commit), median of {args.writes}:")
        print(f"{'store':<20}{'API':>10}{'CLI':>10}")
        for name in stores:
            api_ms, cli_ms = statistics.median(api[name]) * 1000, statistics.median(cli[name]) * 1000
            print(f"{name:<20}{api_ms:>8.1f}ms{cli_ms:>8.1f}ms")


if __name__ == "__main__":
    main()

"""statedir's cost against the floor of the git work it does. Run from the repository root:

    .venv/bin/python bench/bench.py [--runs 10000] [--entries 100000] [--per-day 1000] [--commits 10000] [--repeat 15]

Builds its stores in a temp dir and prints one table: each figure is a median over repeated
runs, with its ratio against a floor measured in the same run. Where the two can run in turn
(A B A B ...), the ratio is the median of the pair-by-pair ratios.
"""
from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import statedir
from statedir import api
from statedir.files import yaml
from statedir.gitops import commit_message

BIN = Path(sys.executable).parent / "statedir"
LOG_FORMAT = ("--format=%H%x1f%cd%x1f%(trailers:key=Statedir-Run,valueonly,separator=%x2C)%x1f"
              "%(trailers:key=Statedir-Actor,valueonly,separator=%x2C)%x1f"
              "%(trailers:key=Statedir-Action,valueonly,separator=%x2C)%x1f%s%x1e")


def median(action: Callable[[int], object], repeat: int) -> float:
    action(-1)  # warm caches once, as a long-lived store would have them
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        action(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paired(action: Callable[[int], object], floor: Callable[[int], object], repeat: int) -> tuple[float, float, float]:
    """Medians of `action` and of `floor` run in turn (A B A B ...), and the median of their
    pair-by-pair ratios: a shared machine whose speed drifts moves both sides of a pair alike."""
    action(-1)
    floor(-1)
    a, b = [], []
    for i in range(repeat):
        for side, out in ((action, a), (floor, b)):
            start = time.perf_counter()
            side(i)
            out.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b, strict=True))


def sh(args: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, **kwargs)  # type: ignore[call-overload]


def make_store(root: Path, name: str) -> Path:
    repo = root / name
    sh(["git", "init", "-q", str(repo)], cwd=root)
    api.init(repo / "state")
    sd = statedir.open(repo / "state")
    sd.new("r1", topic="bench")
    sd.stage("r1", "1", "in_progress")
    (repo / "notes.txt").write_text("0\n")
    sh(["git", "add", "notes.txt"], cwd=repo)
    sh(["git", "commit", "-q", "-m", "notes"], cwd=repo)
    return repo


def grow_runs(repo: Path, count: int) -> None:
    """Copies of r1 with their own ids: a store of `count` runs, committed."""
    runs = repo / "state" / "runs"
    template = runs / "r1"
    for n in range(2, count + 1):
        target = runs / f"r{n}"
        shutil.copytree(template, target)
        state = target / "state.yaml"
        state.write_text(state.read_text().replace("run_id: r1\n", f"run_id: r{n}\n"))
    sh(["git", "add", "-A", "state"], cwd=repo)
    sh(["git", "commit", "-q", "-m", f"{count} runs"], cwd=repo)


def settle_index(repo: Path) -> None:
    """Wait out git's racy-clean window: for about a second after a large file changes, every
    index refresh re-hashes it, which would charge that to whatever is measured next."""
    time.sleep(1.1)
    sh(["git", "update-index", "-q", "--refresh"], cwd=repo)


def grow_log(repo: Path, run_id: str, entries: int, per_day: int) -> str:
    """`entries` transitions entries in day segments of `per_day` entries, for the days before
    today (as a run that has been busy for months has them), committed. Returns one entry's text."""
    import datetime

    folder = repo / "state" / "runs" / run_id / "history" / "transitions"
    today = datetime.datetime.now(datetime.timezone.utc).date()
    header = next(folder.glob("*.yaml")).read_text().partition("\n")[0] + "\n"
    days = -(-entries // per_day)
    for n in range(days):
        day = today - datetime.timedelta(days=days - n)
        count = min(per_day, entries - n * per_day)
        text = "".join(yaml.dump_entry({"at": f"{day}T{(k * 86400 // count) // 3600:02d}:"
                                              f"{(k * 86400 // count) % 3600 // 60:02d}:00Z",
                                        "actor": "pipeline_orchestrator", "action": "set",
                                        "summary": "set topic", "reason": "bench"}) for k in range(count))
        (folder / f"{day}.yaml").write_text(header + text)
    sh(["git", "add", str(folder)], cwd=repo)
    sh(["git", "commit", "-q", "-m", f"{entries} log entries over {days} days"], cwd=repo)
    settle_index(repo)
    return yaml.dump_entry({"at": "2026-01-01T00:00:00Z", "actor": "pipeline_orchestrator", "action": "set",
                            "summary": "set topic", "reason": "bench"})


def grow_commits(repo: Path, run_id: str, commits: int) -> None:
    """`commits` state commits with trailers, written by git fast-import."""
    head = sh(["git", "rev-parse", "HEAD"], cwd=repo).stdout.decode().strip()
    branch = sh(["git", "symbolic-ref", "HEAD"], cwd=repo).stdout.decode().strip()
    path = f"state/runs/{run_id}/bench.txt"
    chunks = []
    for n in range(commits):
        message = (f"set topic {n}\n\nStatedir-Run: {run_id}\nStatedir-Actor: pipeline_orchestrator\n"
                   f"Statedir-Action: set\n").encode()
        content = f"{n}\n".encode()
        chunks.append(f"commit {branch}\ncommitter bench <bench@x> {1700000000 + n} +0000\n".encode()
                      + f"data {len(message)}\n".encode() + message
                      + (f"from {head}\n".encode() if n == 0 else b"")
                      + f"M 100644 inline {path}\ndata {len(content)}\n".encode() + content + b"\n")
    sh(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(chunks))
    sh(["git", "reset", "-q", "--hard"], cwd=repo)


def cli_set(repo: Path, run_id: str = "r1") -> Callable[[int], object]:
    return lambda i: sh([str(BIN), "set", run_id, "topic", f"t{i}", "--reason", "bench"], cwd=repo)


def floor_cli(repo: Path) -> Callable[[int], object]:
    def action(i: int) -> None:
        sh([sys.executable, "-c", "pass"], cwd=repo)
        (repo / "notes.txt").write_text(f"{i}\n")
        sh(["git", "add", "notes.txt"], cwd=repo)
        sh(["git", "commit", "-q", "-m", f"note {i}"], cwd=repo)
    return action


def floor_git(repo: Path, rel: str = "notes.txt") -> Callable[[int], object]:
    """git add + git commit of a one-line change (appended, so a long file stays long)."""
    def action(i: int) -> None:
        with (repo / rel).open("a") as out:
            out.write(f"git {i}\n")
        sh(["git", "add", rel], cwd=repo)
        sh(["git", "commit", "-q", "-m", f"note {i}"], cwd=repo)
    return action


def peak_rss_kib(args: list[str], cwd: Path) -> int:
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(sh([sys.executable, "-c", probe, *args], cwd=cwd).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--per-day", type=int, default=1_000, help="log entries per day segment")
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    opts = parser.parse_args()
    for var, value in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@x"),
                       ("GIT_COMMITTER_NAME", "bench"), ("GIT_COMMITTER_EMAIL", "bench@x")):
        os.environ.setdefault(var, value)
    # Byte-compile statedir as an installed package would be, whatever PYTHONDONTWRITEBYTECODE says.
    compileall.compile_dir(str(Path(statedir.__file__).parent), quiet=1)
    rows: list[tuple[str, float, str, float, float, str]] = []

    def row(what: str, value: float, floor_name: str, floor: float, target: str, ratio: float | None = None) -> None:
        rows.append((what, value, floor_name, floor, value / floor if ratio is None else ratio, target))
        print(f"  measured: {what}", file=sys.stderr)

    def pair(what: str, action: Callable[[int], object], floor_name: str, floor: Callable[[int], object],
             target: str, repeat: int = opts.repeat) -> None:
        value, base, ratio = paired(action, floor, repeat)
        row(what, value, floor_name, base, target, ratio)

    with tempfile.TemporaryDirectory(prefix="statedir-bench-") as tmp:
        root = Path(tmp)
        small = make_store(root, "small")
        sd = statedir.open(small / "state")
        pair("CLI transition (set + commit)", cli_set(small), "python -c pass + git add + git commit",
             floor_cli(small), "<= 3")
        python = lambda i: sh([sys.executable, "-c", "pass"], cwd=small)  # noqa: E731
        pair("CLI status --line", lambda i: sh([str(BIN), "status", "r1", "--line"], cwd=small), "python -c pass",
             python, "-")
        pair("CLI --version", lambda i: sh([str(BIN), "--version"], cwd=small), "python -c pass", python, "-")
        pair("API transition (set + commit)", lambda i: sd.set("r1", "topic", f"api {i}", reason="bench"),
             "git add + git commit", floor_git(small), "<= 1.5")

        sd.new("biglog", topic="bench")
        sd.new("emptylog", topic="bench")
        entry = grow_log(small, "biglog", opts.entries, opts.per_day)
        # In turn: the append goes to today's segment, so the sealed days never change and git
        # never re-hashes them (the long log's cost is gone, not moved elsewhere).
        pair(f"append to a log of {opts.entries:,} entries ({opts.per_day:,} a day)",
             lambda i: sd.set("biglog", "topic", f"b{i}", reason="bench"), "append to an empty log",
             lambda i: sd.set("emptylog", "topic", f"e{i}", reason="bench"), "<= 1.2")
        # Context: git hashes a changed file whole, so a one-file log (the layout before
        # segments) made every append cost the whole log.
        (small / "big.log").write_text(entry * opts.entries)
        (small / "empty.log").write_text("")
        sh(["git", "add", "big.log", "empty.log"], cwd=small)
        sh(["git", "commit", "-q", "-m", "logs"], cwd=small)
        settle_index(small)
        empty = median(floor_git(small, "empty.log"), opts.repeat)
        row(f"  git: add + commit, a line to a {opts.entries:,}-entry file", median(floor_git(small, "big.log"),
                                                                                 opts.repeat),
            "to an empty file", empty, "-")

        big = make_store(root, "big")
        grow_runs(big, opts.runs)
        for label, args in (("status", ["status", "r1"]), ("get", ["get", "r1", "stages.1.status"])):
            pair(f"{label} in a {opts.runs:,}-run store", lambda i, a=args: sh([str(BIN), *a], cwd=big),
                 "in a 1-run store", lambda i, a=args: sh([str(BIN), *a], cwd=small), "<= 1.2")
        pair(f"CLI transition in a {opts.runs:,}-run store", cli_set(big), "in a 1-run store", cli_set(small),
             "<= 1.2")
        # Context: git's own add + commit of one line grows with the number of tracked files.
        pair(f"  git: add + commit, {opts.runs:,}-run store", floor_git(big), "in a 1-run store", floor_git(small),
             "-")

        def validate_one(repo: Path) -> Callable[[int], object]:
            """A valid state.yaml with new bytes each time (no parse-cache hit), validated."""
            state = repo / "state" / "runs" / "r1" / "state.yaml"
            text = re.sub(r"(?m)^topic: .*$", "topic: {}", state.read_text().replace("{", "{{").replace("}", "}}"))
            return lambda i: (state.write_text(text.format(f"validate {i} {time.time_ns()}")),
                              sh([str(BIN), "validate", str(state)], cwd=repo))
        pair(f"validate one changed file, {opts.runs:,} runs", validate_one(big), "in a 1-run store",
             validate_one(small), "<= 1.2")
        start = time.perf_counter()
        sh([str(BIN), "validate"], cwd=big)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        sh([str(BIN), "validate"], cwd=big)
        warm = time.perf_counter() - start
        row(f"validate the whole {opts.runs:,}-run store (cold cache)", cold, "warm cache", warm, "-")

        grow_commits(small, "r1", opts.commits)
        spec = "state/runs/r1"
        pair(f"log r1 over {opts.commits:,} commits", lambda i: sh([str(BIN), "log", "r1", "--json"], cwd=small),
             "git log, same format",
             lambda i: sh(["git", "log", commit_message.UTC_DATE, LOG_FORMAT, "--", spec], cwd=small,
                          env={**os.environ, "TZ": "UTC"}), "<= 2", repeat=7)

        rss = peak_rss_kib([str(BIN), "set", "r1", "topic", "rss", "--reason", "bench"], small)
        rss_floor = peak_rss_kib([sys.executable, "-c", "pass"], small)

    print(f"{'figure':<46} {'median':>9}  {'floor':<40} {'median':>9} {'ratio':>6} {'target':>7}")
    for what, value, floor_name, floor, ratio, target in rows:
        print(f"{what:<46} {value * 1000:>7.1f}ms  {floor_name:<40} {floor * 1000:>7.1f}ms "
              f"{ratio:>6.2f} {target:>7}")
    print(f"{'peak memory of a CLI transition':<46} {rss / 1024:>7.1f}MB  {'python -c pass':<40} "
          f"{rss_floor / 1024:>7.1f}MB {rss / rss_floor:>6.2f} {'-':>7}")


if __name__ == "__main__":
    main()

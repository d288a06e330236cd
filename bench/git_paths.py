"""Which git path reads history fastest: statedir's (one `git log` whose format asks git for the
trailers) against GitPython's (`iter_commits` and each commit's trailers parsed in Python), and a
plain ref and config read through a git process against GitPython's readers, with GitPython's own
import time beside them. Run from the repository root:

    .venv/bin/python bench/git_paths.py [--transitions 300] [--commits 2000] [--repeat 7]

Builds a store in a temp dir: one run moved through `--transitions` transitions, then
`--commits` commits of a file beside the store, so the run's history is found among many
commits. Prints medians and each GitPython figure's ratio to statedir's path, measured in turn
in the same run (docs/architecture.md, "Which git path does what").
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from statedir import api
from statedir.gitops import git as statedir_git
from statedir.history import log
from statedir.store.store import Store


def build(repo: Path, transitions: int, commits: int) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("r1", topic="t")
    for n in range(transitions):
        sd.set("r1", "topic", f"topic {n}", reason="bench")
    # the other commits in one fast-import stream: a file beside the store, changed each time
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    stream = []
    for n in range(commits):
        body = f"{n}\n".encode()
        message = f"note {n}\n".encode()
        stream.append(b"commit refs/heads/main\ncommitter bench <bench@example.invalid> 1700000000 +0000\n"
                      + b"data %d\n%s" % (len(message), message)
                      + (b"from %s\n" % head.encode() if n == 0 else b"")
                      + b"M 100644 inline notes.txt\ndata %d\n%s\n" % (len(body), body))
    branch = subprocess.run(["git", "symbolic-ref", "--short", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    data = b"".join(stream).replace(b"refs/heads/main", f"refs/heads/{branch}".encode())
    subprocess.run(["git", "fast-import", "--quiet", "--force"], cwd=repo, input=data, check=True)
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=repo, check=True)


def median_ms(call: Callable[[], object], repeat: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transitions", type=int, default=300)
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        build(repo, args.transitions, args.commits)
        started = time.perf_counter()
        import git as gitpython  # GitPython, imported here so its import time is measured once

        imported = (time.perf_counter() - started) * 1000
        store = Store(repo / "state")

        def ours_log() -> int:
            return len(log.entries(store, "r1"))

        def gitpython_log() -> int:
            found = []
            for commit in gitpython.Repo(repo).iter_commits("HEAD", paths="state/runs/r1"):
                trailers = commit.trailers_dict
                found.append((commit.hexsha, commit.committed_datetime, commit.author.name,
                              trailers.get("Statedir-Actor"), trailers.get("Statedir-Action"), commit.summary))
            return len(found)

        def ours_messages() -> int:
            out = statedir_git.run(repo, "log", "--format=%H%x1f%B%x1e").stdout
            return out.count(b"\x1e")

        def gitpython_messages() -> int:
            return sum(1 for commit in gitpython.Repo(repo).iter_commits("HEAD") if commit.message is not None)

        opened = gitpython.Repo(repo)
        rows = [
            ("log RUN: the run's commits and trailers", ours_log, gitpython_log),
            ("every commit's message", ours_messages, gitpython_messages),
            ("HEAD's commit", lambda: statedir_git.head(repo), lambda: opened.head.commit.hexsha),
            ("one config value (git process / GitPython reader)",
             lambda: statedir_git.run(repo, "config", "--get", "core.bare"),
             lambda: gitpython.Repo(repo).config_reader().get_value("core", "bare")),
        ]
        print(f"{args.transitions} transitions of run r1 among {args.transitions + args.commits + 1} commits")
        print(f"{'read':52s} {'statedir':>10s} {'GitPython':>10s} {'ratio':>7s}")
        for name, ours, theirs in rows:
            a, b = median_ms(ours, args.repeat), median_ms(theirs, args.repeat)
            print(f"{name:52s} {a:8.2f}ms {b:8.2f}ms {b / a:6.2f}x")
        print(f"{'import git (GitPython), once per process':52s} {'':>10s} {imported:8.1f}ms")


if __name__ == "__main__":
    sys.exit(main())

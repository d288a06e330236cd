"""A sample store of N runs and M commits, made in minutes through git's plumbing. Run from the
repository root:

    .venv/bin/python bench/scale_store.py DIR [--runs 10000] [--commits 100000] [--long 0] [--no-maintenance]

One run (r1) is made and moved through real statedir transitions; with `--long K`, r3 as well,
through K transitions of its own (a run whose history page shows only its newest commits, all of
them older than the M commits below); the other runs are copies of r1's files with their own ids
(the stage files are the same blobs, `state.yaml` and the log are made with the run's id), added in
one commit by `git fast-import`. The M commits are made the
same way; each changes a file outside the store (`bench/notes.txt`) and carries the trailer
`Statedir-Bench: synthetic`, so `verify` and `validate` accept the store as it is (they read
only commits that touched it) while every history read walks M commits. Then, unless
`--no-maintenance`, the object database is packed and its commit-graph written as statedir's
own maintenance keeps it (`doctor --fix`).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

import statedir
from statedir import api
from statedir.gitops import maintenance

SYNTHETIC = "Statedir-Bench: synthetic"


def sh(args: list[str], cwd: Path, data: bytes | None = None) -> str:
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, input=data).stdout.decode()


def _blob(data: bytes) -> bytes:
    return f"data {len(data)}\n".encode() + data + b"\n"


def build(repo: Path, runs: int, commits: int, *, long: int = 0, maintained: bool = True) -> Path:
    """A git repository at `repo` with a store `state/` of `runs` runs and about `commits`
    commits in all (`long` of them r3's own, older than the rest); returns the repository."""
    repo.mkdir(parents=True, exist_ok=True)
    sh(["git", "init", "-q", "-b", "main", str(repo)], cwd=repo)
    sh(["git", "config", "user.name", "bench"], cwd=repo)
    sh(["git", "config", "user.email", "bench@statedir.invalid"], cwd=repo)
    api.init(repo / "state")
    sd = statedir.open(repo / "state")
    sd.new("r1", topic="scale bench")
    sd.stage("r1", "1", "in_progress")
    sd.set("r1", "topic", "scale bench, set", reason="bench")
    long = long if runs >= 3 else 0
    if long:
        sd.new("r3", topic="scale bench, a long history")
        for n in range(long - 1):
            sd.set("r3", "topic", f"long history {n}", reason="bench")
    base = sh(["git", "rev-parse", "HEAD"], cwd=repo).strip()
    listing = sh(["git", "ls-tree", "-r", "HEAD", "state/runs/r1/"], cwd=repo).splitlines()
    files = []  # (mode, sha, path under the run)
    for line in listing:
        meta, path = line.split("\t", 1)
        mode, _, sha = meta.split()
        files.append((mode, sha, path[len("state/runs/r1/"):]))
    own = {rel: (repo / "state/runs/r1" / rel).read_bytes() for _, _, rel in files
           if re.search(rb"\br1\b", (repo / "state/runs/r1" / rel).read_bytes())}
    chunks = [f"commit refs/heads/main\ncommitter bench <bench@statedir.invalid> 1700000000 +0000\n".encode(),
              _blob(f"{runs - 1 - bool(long)} runs copied from r1\n\n{SYNTHETIC}\n".encode()),
              f"from {base}\n".encode()]
    for n in range(2, runs + 1):
        if n == 3 and long:
            continue
        for mode, sha, rel in files:
            path = f"state/runs/r{n}/{rel}"
            if rel in own:
                data = re.sub(rb"\br1\b", f"r{n}".encode(), own[rel])
                chunks.append(f"M {mode} inline {path}\n".encode() + _blob(data))
            else:
                chunks.append(f"M {mode} {sha} {path}\n".encode())
    chunks.append(b"\n")
    made = 5 + long  # init, new, stage, set, the long run's and the copies
    for n in range(max(0, commits - made)):
        message = f"bench commit {n}\n\n{SYNTHETIC}\n".encode()
        chunks.append(f"commit refs/heads/main\ncommitter bench <bench@statedir.invalid> {1700000001 + n} +0000\n"
                      .encode() + _blob(message) + b"M 100644 inline bench/notes.txt\n" + _blob(f"{n}\n".encode())
                      + b"\n")
    sh(["git", "fast-import", "--quiet", "--force"], cwd=repo, data=b"".join(chunks))
    sh(["git", "reset", "-q", "--hard", "main"], cwd=repo)
    if maintained:
        maintenance.repair(repo)
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--commits", type=int, default=100000)
    parser.add_argument("--long", type=int, default=0, help="r3 made by this many transitions of its own")
    parser.add_argument("--no-maintenance", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    build(args.dir, args.runs, args.commits, long=args.long, maintained=not args.no_maintenance)
    print(f"{args.runs} runs, {args.commits} commits in {time.perf_counter() - start:.1f} s: {args.dir}",
          file=sys.stderr)


if __name__ == "__main__":
    main()

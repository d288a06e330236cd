"""Reliability figures: load, crashes, hostile input. Run from the repository root:

    .venv/bin/python bench/reliability.py [--writers 32] [--transitions 4] [--trials 5]

Builds its stores in a temp dir and prints one table; every lost/corrupt figure should be 0.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from reliability.helpers import git, material_labels, state_commits  # noqa: E402
from reliability.load import check, hammer, prepare  # noqa: E402
from reliability.test_hostile import COMMANDS, HOSTILE_FILES, NASTY, OPTIONS, TARGETS  # noqa: E402

from statedir import api, faults, validate  # noqa: E402
from statedir.cli import main  # noqa: E402


def fresh(root: Path, name: str) -> Path:
    repo = root / name
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("r1", topic="figures")
    sd.stage("r1", "1", "in_progress")
    return repo


def consistent(repo: Path) -> bool:
    api.StateDir(repo / "state")
    clean = git(repo, "status", "--porcelain", "--untracked-files=all", "--", "state") == ""
    return clean and not validate.store(repo / "state")


def crashes(root: Path, trials: int) -> dict[str, int]:
    step = [sys.executable, "-m", "statedir", "material", "r1", "paper_draft", "--json"]
    survived = tried = lost = 0
    for point in faults.POINTS:
        repo = fresh(root, f"crash-{point}")
        accepted = 0
        for _ in range(trials):
            before = len(state_commits(repo))
            proc = subprocess.run(step, cwd=repo, capture_output=True, env={**os.environ, "STATEDIR_FAULT": point})
            accepted += len(state_commits(repo)) - before
            tried += 1
            ok = proc.returncode == -signal.SIGKILL and consistent(repo)
            ok = ok and subprocess.run(step, cwd=repo, capture_output=True).returncode == 0
            accepted += 1
            lost += len(material_labels(repo, "r1")) != accepted
            survived += ok
    repo = fresh(root, "crash-random")
    rng = random.Random(1)
    accepted = 0
    for _ in range(trials * 4):
        before = len(state_commits(repo))
        proc = subprocess.Popen(step, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.25))
        proc.kill()
        proc.wait()
        ok = consistent(repo)  # the next command first: it waits for a commit the writer left running
        accepted += len(state_commits(repo)) - before
        tried += 1
        survived += ok
        lost += len(material_labels(repo, "r1")) != accepted
    return {"points": len(faults.POINTS) + 1, "tried": tried, "survived": survived, "lost": lost}


def hostile(root: Path, count: int) -> dict[str, int]:
    repo = fresh(root, "hostile")
    rng = random.Random(2)
    tracebacks = bad_exit = 0
    words = NASTY + OPTIONS
    for _ in range(count):
        args = [rng.choice(COMMANDS), *rng.sample(words, rng.randint(0, 5)), "--store", str(repo / "state")]
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(args)
        except BaseException:  # noqa: BLE001 - counting escapes is the point of this figure
            tracebacks += 1
            continue
        bad_exit += code not in (0, 1, 2, 3)
    planted = 0
    for name, raw in HOSTILE_FILES.items():
        for target in TARGETS:
            repo = fresh(root, f"planted-{len(name)}-{planted}")
            (repo / "state" / target).write_bytes(raw)
            for args in (["stage", "r1", "1", "completed"], ["status", "r1"], ["validate"]):
                out, err = io.StringIO(), io.StringIO()
                try:
                    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                        code = main([*args, "--store", str(repo / "state")])
                except BaseException:  # noqa: BLE001
                    tracebacks += 1
                    continue
                bad_exit += code not in (0, 1, 2, 3)
                planted += 1
    return {"tried": count + planted, "tracebacks": tracebacks, "bad_exit": bad_exit}


def main_figures() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--transitions", type=int, default=4)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--hostile", type=int, default=500)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="statedir-figures-") as tmp:
        root = Path(tmp)
        os.environ.setdefault("GIT_AUTHOR_NAME", "figures")
        os.environ.setdefault("GIT_AUTHOR_EMAIL", "figures@statedir.invalid")
        os.environ.setdefault("GIT_COMMITTER_NAME", "figures")
        os.environ.setdefault("GIT_COMMITTER_EMAIL", "figures@statedir.invalid")
        prepare(root / "load", opts.writers)
        start = time.monotonic()
        load = check(root / "load", hammer(root / "load", opts.writers, opts.transitions))
        elapsed = time.monotonic() - start
        crash = crashes(root, opts.trials)
        bad = hostile(root, opts.hostile)
    rows = [
        ("load", f"{opts.writers} writers x {opts.transitions} transitions",
         f"{load['accepted']} accepted, {load['lock_timeouts']} lock timeouts, {elapsed:.1f} s",
         load["lost"], load["corrupt"]),
        ("crashes", f"{crash['points']} kill points ({len(faults.POINTS)} fixed + random), {crash['tried']} trials",
         f"{crash['survived']} survived", crash["lost"], crash["tried"] - crash["survived"]),
        ("hostile input", f"{bad['tried']} commands (arguments + planted files)",
         f"{bad['tracebacks']} tracebacks, {bad['bad_exit']} bad exit codes", 0, bad["tracebacks"] + bad["bad_exit"]),
    ]
    print(f"{'what':<14} {'tried':<52} {'result':<40} {'lost':>4} {'corrupt':>7}")
    for row in rows:
        print(f"{row[0]:<14} {row[1]:<52} {row[2]:<40} {row[3]:>4} {row[4]:>7}")


if __name__ == "__main__":
    main_figures()

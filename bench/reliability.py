"""Reliability figures: load, crashes, hostile input, failure paths. Run from the repository root:

    .venv/bin/python bench/reliability.py [--writers 32] [--transitions 4] [--trials 5] [--kills 20]

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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' shared helpers, tests.support

from statedir import api, fault_injection
from statedir.cli import main  # noqa: E402
from statedir.engine import validate  # noqa: E402
from tests.support.load import check, hammer, prepare  # noqa: E402
from tests.support.reliability import (  # noqa: E402
    COMMANDS,
    HOSTILE_FILES,
    NASTY,
    OPTIONS,
    TARGETS,
    git,
    material_labels,
    state_commits,
)


def fresh(root: Path, name: str, *, big: bool = False) -> Path:
    """A store with run r1 at stage 1; `big`: in a repository whose index is over 1 MiB
    (statedir commits with plumbing there)."""
    from tests.support.util import make_large

    repo = root / name
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    if big:
        make_large(repo)
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
    for point in fault_injection.POINTS:
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
    return {"points": len(fault_injection.POINTS) + 1, "tried": tried, "survived": survived, "lost": lost}


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


def large(root: Path, name: str) -> Path:
    return fresh(root, name, big=True)


def index_consistent(repo: Path) -> bool:
    """The store equals HEAD, and so does the user's index for every store path."""
    return (consistent(repo) and not (repo / ".git" / "index.lock").exists()
            and git(repo, "diff", "--cached", "--name-only", "HEAD", "--", "state") == "")


def group_kills(repo: Path, trials: int) -> dict[str, int]:
    """SIGKILL the whole process group of a transition (Ctrl-C, an agent's timeout) at random moments."""
    rng = random.Random(20261130)
    ok = accepted = 0
    for trial in range(trials):
        before = len(state_commits(repo))
        proc = subprocess.Popen([sys.executable, "-m", "statedir", "material", "r1", "paper_draft"], cwd=repo,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(rng.uniform(0.05, 0.5))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        reader = subprocess.run([sys.executable, "-m", "statedir", "status", "r1", "--line"], cwd=repo,
                                capture_output=True)
        accepted += len(state_commits(repo)) - before
        (repo / f"user{trial}.txt").write_text("x\n")
        git(repo, "add", f"user{trial}.txt")
        git(repo, "commit", "-q", "-m", "a user's commit after the kill")
        clean_user = git(repo, "show", "--format=", "--name-only", "HEAD").split() == [f"user{trial}.txt"]
        ok += reader.returncode == 0 and index_consistent(repo) and clean_user
    lost = accepted - len(material_labels(repo, "r1"))
    return {"tried": trials, "ok": ok, "lost": lost}


def user_commits(repo: Path, writers: int, transitions: int) -> dict[str, int]:
    """Writers on their own runs while the user commits a file of their own (`git commit -- PATH`)."""
    (repo / "user.txt").write_text("start\n")
    git(repo, "add", "user.txt")
    git(repo, "commit", "-q", "-m", "user start")
    for n in range(writers):
        subprocess.run([sys.executable, "-m", "statedir", "new", f"w{n}", "--topic", "t"], cwd=repo, check=True,
                       capture_output=True)
    code = ("import subprocess, sys\nprint(sum(subprocess.run([sys.executable, '-m', 'statedir', 'set', sys.argv[1], "
            "'topic', f'v{i}', '--reason', 'r'], capture_output=True).returncode != 0\n"
            "          for i in range(int(sys.argv[2]))))")
    procs = [subprocess.Popen([sys.executable, "-c", code, f"w{n}", str(transitions)], cwd=repo,
                              stdout=subprocess.PIPE, text=True) for n in range(writers)]
    made = 0
    while any(p.poll() is None for p in procs):
        (repo / "user.txt").write_text(f"{made}\n")
        made += subprocess.run(["git", "commit", "-q", "-m", "user", "--", "user.txt"], cwd=repo,
                               capture_output=True).returncode == 0
    failed = sum(int(p.communicate()[0]) for p in procs)
    users = [line.split()[0] for line in git(repo, "log", "--format=%H %s").splitlines() if line.endswith(" user")]
    reverted = sum(git(repo, "show", "--format=", "--name-only", sha).split() != ["user.txt"] for sha in users)
    sd = api.StateDir(repo / "state")
    lost = sum(transitions + 1 - len(sd.histories(f"w{n}")["transitions"]) for n in range(writers))
    return {"user": len(users), "failed": failed, "reverted": reverted, "lost": lost}


def git_failures(repo: Path) -> dict[str, int]:
    """A transition with git failing or pointed elsewhere: every file must stay as it was."""
    from tests.support.util import snapshot

    other = repo.parent / f"{repo.name}-other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    cases: list[tuple[dict[str, str], Callable[[], None], Callable[[], None]]] = [
        ({"GIT_DIR": str(other / ".git")}, lambda: None, lambda: None),
        ({"GIT_WORK_TREE": str(other)}, lambda: None, lambda: None),
        ({"GIT_INDEX_FILE": str(other / "idx")}, lambda: None, lambda: None),
    ]
    if os.geteuid() == 0:
        cases.append(({}, lambda: subprocess.run(["chown", "-R", "65534", str(repo)], check=True),
                      lambda: subprocess.run(["chown", "-R", "0", str(repo)], check=True)))
    head = (repo / ".git" / "HEAD").read_bytes()
    cases.append(({}, lambda: (repo / ".git" / "HEAD").write_text("garbage\n"),
                  lambda: (repo / ".git" / "HEAD").write_bytes(head)))
    lost = refused = 0
    for env, spoil, mend in cases:
        before = snapshot(repo, objects=False)
        spoil()
        proc = subprocess.run([sys.executable, "-m", "statedir", "set", "r1", "topic", "y", "--reason", "r"],
                              cwd=repo, capture_output=True, env={**os.environ, **env})
        mend()
        refused += proc.returncode == 3 and b"Traceback" not in proc.stderr
        lost += snapshot(repo, objects=False) != before
    return {"tried": len(cases), "refused": refused, "lost": lost}


def main_figures() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--transitions", type=int, default=4)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--hostile", type=int, default=500)
    parser.add_argument("--kills", type=int, default=20, help="whole-process-group kills per repository kind")
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
        failure_rows = []
        for kind, make in (("small", fresh), ("large", large)):
            kills = group_kills(make(root, f"kills-{kind}"), opts.kills)
            users = user_commits(make(root, f"users-{kind}"), 4, 8)
            gits = git_failures(make(root, f"git-{kind}"))
            failure_rows += [
                ("group kills", f"{kills['tried']} whole process groups killed, {kind} repository",
                 f"{kills['ok']} left store, index and HEAD consistent", kills["lost"], kills["tried"] - kills["ok"]),
                ("user commits", f"4 writers x 8 beside the user's commits, {kind}",
                 f"{users['user']} user commits, {users['failed']} refused", users["lost"], users["reverted"]),
                ("git failing", f"{gits['tried']} git failures/redirects, {kind}",
                 f"{gits['refused']} refused with exit 3", gits["lost"], gits["tried"] - gits["refused"]),
            ]
    rows = [
        ("load", f"{opts.writers} writers x {opts.transitions} transitions",
         f"{load['accepted']} accepted, {load['lock_timeouts']} lock timeouts, {elapsed:.1f} s",
         load["lost"], load["corrupt"]),
        ("crashes", f"{crash['points']} kill points ({len(fault_injection.POINTS)} fixed + random), "
                    f"{crash['tried']} trials",
         f"{crash['survived']} survived", crash["lost"], crash["tried"] - crash["survived"]),
        ("hostile input", f"{bad['tried']} commands (arguments + planted files)",
         f"{bad['tracebacks']} tracebacks, {bad['bad_exit']} bad exit codes", 0, bad["tracebacks"] + bad["bad_exit"]),
        *failure_rows,
    ]
    print(f"{'what':<14} {'tried':<52} {'result':<44} {'lost':>4} {'corrupt':>7}")
    for row in rows:
        print(f"{row[0]:<14} {row[1]:<52} {row[2]:<44} {row[3]:>4} {row[4]:>7}")


if __name__ == "__main__":
    main_figures()

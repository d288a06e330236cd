"""Shared checks for the reliability tests (crashes, failure paths, load, hostile input): what "nothing
lost, nothing corrupt" means."""
from __future__ import annotations

import subprocess
from pathlib import Path

from statedir import api
from statedir.engine import validate
from tests.support.util import call, snapshot


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def state_commits(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%H", "--", "state").split()


def assert_store_equals_last_commit(repo: Path) -> None:
    """No half transition visible: the store is exactly HEAD, and every file validates."""
    api.StateDir(repo / "state")  # an ordinary reader first: it rolls back a dead writer's half
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", "state") == ""
    assert git(repo, "diff", "HEAD", "--stat", "--", "state") == ""
    assert validate.store(repo / "state") == []


def material_labels(repo: Path, run_id: str) -> list[str]:
    folder = repo / "state" / "runs" / run_id / "materials"
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


# The hostile arguments and files the reliability, history and bench tests feed every command.
NASTY = ["../x", "../../etc/passwd", "/etc/passwd", "..", ".", "a/../../b", "x\x00y", "é", "\udcff",
         "-rf", "--json", "$(reboot)", "a" * 5000, "", " ", "2.5/../..", "3'", "runs/r1", "\n", "%s%n",
         "r1", "1", "2.5", "paper_draft", "PASS", "completed", "in_progress", "--store", "/dev/null"]


HOSTILE_FILES = {
    "alias bomb": b"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    "python tag": b"a: !!python/object/apply:os.system ['true']\n",
    "invalid utf-8": b"run_id: \xff\n",
    "duplicate keys": b"run_id: r1\nrun_id: r2\n",
    "deep nesting": b"a: " + b"[" * 3000 + b"]" * 3000,
    "nul byte": b"run_id: r\x00\n",
    "huge": b"# " + b"x" * (17 * 1024 * 1024) + b"\n",
    "not a mapping": b"- 1\n- 2\n",
    "empty": b"",
    "wrong types": b"run_id: [1]\nstages: 7\n",
    "very long value": b"topic: " + b"y" * 200_000 + b"\n",
}
COMMANDS = ["new", "runs", "show", "get", "status", "stage", "output", "pipeline", "set", "material",
            "integrity", "revision", "loop", "prereq", "observe", "confirm", "redo", "log", "validate",
            "resume", "bind", "seal", "templates"]
OPTIONS = ["--topic", "--template", "--entry-point", "--format", "--mode", "--output", "--decision", "--reason",
           "--turns", "--file", "--upstream", "--refs-total", "--refs-verified", "--issue", "--items-total",
           "--stage", "--checkpoint", "--report", "--next", "--response", "--actor", "--passport", "--bindings",
           "--choice", "--line", "--json", "--schema", "--artifact-root", "--artifact", "--role", "--group",
           "--group-stage", "--path", "--not-applicable", "--unavailable"]
TARGETS = ["runs/r1/state.yaml", "runs/r1/stages/1.yaml", "runs/r1/history/transitions/{today}.yaml", "statedir.yaml"]


def any_call(store: Path, args: list[str]) -> tuple[int, str, str]:
    """The CLI in this process on arguments a property test made up, in the work tree `store`: an exit
    status from 0 to 3 and never a traceback; a refusal says something and leaves the store
    byte-identical. Returns the status and what it printed."""
    before = snapshot(store)
    code, out, err = call(args)
    assert code in (0, 1, 2, 3), (args, code)
    assert "Traceback" not in out + err
    if code != 0:
        assert snapshot(store) == before, args
        assert err.strip() or out.strip(), args
    return code, out, err

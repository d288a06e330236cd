"""Differential tests: `statedir bus` against the behaviour the seed's pipeline-state.sh
documents and shows (argument order, outputs, exit codes), through the real CLI.

Each expectation below was read off the seed script run by hand (jq 1.7); CI has no copy of
it. Where statedir deliberately differs, the step says so. With STATEDIR_SEED_SCRIPT naming a
copy of pipeline-state.sh, `test_side_by_side_with_the_seed_script` replays the same steps
against both and compares them.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from statedir import api
from tests.support.docs_text import readme_example
from tests.support.util import cli, cli_json, shim

S = "2026-06-30-member-blog-gating"
ODD = 'tab\there del\x7f esc\x1b emoji \U0001f600 "q" \\ back'
# (args after the verb, exit code, stdout): stdout None = not compared (it names a path).
STEPS: list[tuple[list[str], int, str | None]] = [
    (["init", S], 0, None),  # the seed prints a sentence naming the path; statedir the path alone
    (["get", S], 0, f'{{\n  "session": "{S}",\n  "phases": {{}}\n}}\n'),
    (["set", S, "session_dir", f"docs/sessions/{S}/"], 0, ""),
    (["set", S, "user_request", "Gate the member blog.\nSecond line, 'quotes' \"too\" and ünïcode"], 0, ""),
    (["get", S, "user_request"], 0, "Gate the member blog.\nSecond line, 'quotes' \"too\" and ünïcode\n"),
    (["set", S, "prd_document", "docs/prd/member-blog-gating.md"], 0, ""),
    (["get", S, "prd_document"], 0, "docs/prd/member-blog-gating.md\n"),
    (["get", S, "no_such_field"], 0, ""),  # a missing field: nothing, exit 0
    (["append", S, "phase-0-evidence", ".ai_log/phase-0-pm-prd.md"], 0, ""),
    (["append", S, "phase-0-evidence", ".ai_log/phase-0-notes.md"], 0, ""),
    (["get", S, "phase-0-evidence"], 0, '[\n  ".ai_log/phase-0-pm-prd.md",\n  ".ai_log/phase-0-notes.md"\n]\n'),
    (["append", S, "prd_document", "x"], 1, ""),  # append to a string: the seed's jq fails (exit 5)
    (["set", S, "phase-0-evidence", "now a string"], 0, ""),  # set replaces whatever the field held
    (["get", S, "phase-0-evidence"], 0, "now a string\n"),
    (["set", S, "empty", ""], 0, ""),
    (["get", S, "empty"], 0, "\n"),  # an empty string is a value: one empty line
    (["set", S, "no_value"], 0, ""),  # VALUE left out: the seed stores ""
    (["get", S, "no_value"], 0, "\n"),
    (["set", S, "number", "42"], 0, ""),
    (["get", S, "number"], 0, "42\n"),  # stored and printed as the string it was given
    (["set", S, "flag", "true"], 0, ""),
    (["get", S, "flag"], 0, "true\n"),
    (["get", S], 0, json.dumps({"session": S, "phases": {}, "session_dir": f"docs/sessions/{S}/",
                                "user_request": "Gate the member blog.\nSecond line, 'quotes' \"too\" and ünïcode",
                                "prd_document": "docs/prd/member-blog-gating.md",
                                "phase-0-evidence": "now a string", "empty": "", "no_value": "", "number": "42",
                                "flag": "true"}, ensure_ascii=False, indent=2) + "\n"),
    (["get", "2026-01-01-never-made"], 1, ""),  # a missing session: exit 1, message on stderr only
    (["get", "2026-01-01-never-made", "field"], 1, ""),
    (["append", "2026-01-02-made-by-append", "items", "first"], 0, ""),  # set/append create the session
    (["get", "2026-01-02-made-by-append", "items"], 0, '[\n  "first"\n]\n'),
    (["append", "2026-01-02-made-by-append", "odd", ODD], 0, ""),
    (["get", "2026-01-02-made-by-append", "odd"], 0,  # jq escapes control characters and DEL, not UTF-8
     '[\n  "tab\\there del\\u007f esc\\u001b emoji \U0001f600 \\"q\\" \\\\ back"\n]\n'),
    (["set", "2026-01-02-made-by-append", "odd", ODD], 0, ""),
    (["get", "2026-01-02-made-by-append", "odd"], 0, ODD + "\n"),
    (["clear", S], 0, None),  # prints "cleared <path>", as the seed's "pipeline-state: cleared <path>"
    (["get", S, "prd_document"], 1, ""),
    (["clear", S], 0, None),  # clearing a missing session is no error (the seed's rm -f)
]


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one): made by `init`, which tests of its own check."""
    return repo / "state"


@pytest.mark.slow
def test_every_documented_step(repo: Path, store: Path) -> None:
    for args, code, stdout in STEPS:
        proc = cli("bus", *args, cwd=repo)
        assert proc.returncode == code, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        if stdout is not None:
            assert proc.stdout == stdout, args
        if code != 0:
            assert proc.stderr.strip(), args  # the reason, for people, on stderr


def test_init_and_clear_print_the_session_file(repo: Path, store: Path) -> None:
    proc = cli("bus", "init", S, cwd=repo)
    path = Path(proc.stdout.strip())
    assert proc.stdout == f"{path}\n" and path == store / "bus" / f"{S}.yaml" and path.is_file()
    # an orchestrator passes it on as state_file: the file names its session
    from statedir.files import yaml

    assert yaml.load(path.read_bytes())["session"] == S
    proc = cli("bus", "clear", S, cwd=repo)
    assert proc.returncode == 0 and proc.stdout == f"cleared {path}\n" and not path.exists()


@pytest.mark.slow  # the seed's own example, as written
def test_the_seed_usage_example_runs_unchanged(repo: Path, store: Path) -> None:
    """The seed's Usage section with `bash scripts/pipeline-state.sh` replaced by `statedir bus`."""
    script = f"""set -euo pipefail
SESSION="{S}"
USER_REQUEST="Gate the member blog behind an active subscription."
STATE_FILE=$(statedir bus init "$SESSION")
statedir bus set "$SESSION" session_dir "docs/sessions/$SESSION/"
statedir bus set "$SESSION" user_request "$USER_REQUEST"
statedir bus set    "$SESSION" prd_document "docs/prd/member-blog-gating.md"
statedir bus append "$SESSION" phase-0-evidence ".ai_log/phase-0-pm-prd.md"
PRD=$(statedir bus get "$SESSION" prd_document)
test "$PRD" = docs/prd/member-blog-gating.md
test -f "$STATE_FILE"
statedir bus get "$SESSION" > full.json
"""
    proc = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{shim(repo)}:{os.environ['PATH']}"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    full = json.loads((repo / "full.json").read_text())
    assert full == {"session": S, "phases": {}, "session_dir": f"docs/sessions/{S}/",
                    "user_request": "Gate the member blog behind an active subscription.",
                    "prd_document": "docs/prd/member-blog-gating.md",
                    "phase-0-evidence": [".ai_log/phase-0-pm-prd.md"]}


SEED = os.environ.get("STATEDIR_SEED_SCRIPT")


@pytest.mark.skipif(not SEED or shutil.which("jq") is None,
                    reason="set STATEDIR_SEED_SCRIPT to a copy of the seed's pipeline-state.sh (needs jq)")
def test_side_by_side_with_the_seed_script(repo: Path, store: Path) -> None:
    assert SEED is not None
    for args, _, _ in STEPS:
        seed = subprocess.run(["bash", SEED, *args], cwd=repo, capture_output=True, text=True, timeout=60)
        ours = cli("bus", *args, cwd=repo)
        assert (seed.returncode == 0) == (ours.returncode == 0), (args, seed.stderr, ours.stderr)
        if args[0] == "get":
            assert ours.stdout == seed.stdout, args


@pytest.mark.slow  # runs a docs page's commands as written, each a CLI process
def test_the_readme_worked_example_runs(repo: Path, store: Path) -> None:
    """As written, twice over (the second run's --clean finds the first's evidence): the example
    ignores its scratch folder itself, once."""
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", "set -euo pipefail\n" + readme_example()], cwd=repo, capture_output=True,
                              text=True, env={**os.environ, "PATH": f"{shim(repo)}:{os.environ['PATH']}",
                                              "USER_REQUEST": "Gate the member blog."}, timeout=300)

    assert not (repo / ".gitignore").exists()
    first = run()
    assert first.returncode == 0, first.stderr
    (repo / ".ai_log" / "stale-from-last-run.log").write_text("x")
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".gitignore").read_text() == ".ai_log/*\n"
    assert not (repo / ".ai_log" / "stale-from-last-run.log").exists()
    assert '[".ai_log/phase-0-pm-prd.md"]' in proc.stdout.replace("\n", "").replace(" ", "")
    code, session = cli_json("bus", "get", S, cwd=repo)
    assert session["phases"] == {"0-requirements": {  # type: ignore[index]
        "agent": "pm-agent", "status": "done", "outputs": {"prd_document": "docs/prd/member-blog-gating.md"},
        "evidence": [".ai_log/phase-0-pm-prd.md"]}}

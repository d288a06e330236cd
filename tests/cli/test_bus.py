"""`statedir bus` as a subprocess: help, README, --json shapes, errors, option handling."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from statedir import api
from tests.support.util import ROOT, cli, cli_json, snapshot

S = "2026-06-30-member-blog-gating"
VERBS = ["init", "set", "append", "get", "clear"]


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one): made by `init`, which tests of its own check."""
    return repo / "state"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.mark.usefixtures("isolated")
def test_the_bus_group_and_every_verb_have_help_and_are_documented() -> None:
    from tests.support.docs_text import page
    from tests.support.util import call

    readme = page("bus")
    assert re.search(r"^\s+bus\s", cli("--help").stdout, re.M)
    listed = cli("bus", "--help")
    assert listed.returncode == 0
    for verb in VERBS:
        assert re.search(rf"^\s+{verb}\s", listed.stdout, re.M), verb
        code, out, _ = call(["bus", verb, "--help"])  # in this process: five CLI starts spared
        assert code == 0 and "Usage: statedir bus" in out and len(out) > 200, verb
        for option in re.findall(r"^\s+(--[a-z-]+)", out, re.M):
            line = next(li for li in out.splitlines() if li.strip().startswith(option))
            assert len(line.strip()) > len(option) + 5, f"{verb} {option} has no help"
        assert f"statedir bus {verb}" in readme, f"docs/bus.md does not document `statedir bus {verb}`"


def test_json_shapes(repo: Path, store: Path) -> None:
    path = str(store / "bus" / f"{S}.yaml")
    code, out = cli_json("bus", "init", S, cwd=repo)
    assert code == 0 and isinstance(out, dict)
    assert out["session"] == out["run_id"] == S and out["path"] == path and out["changed"] is True
    assert re.fullmatch(r"[0-9a-f]{40}", out["commit"]) and out["commit"] == git(repo, "rev-parse", "HEAD").strip()
    code, out = cli_json("bus", "append", S, "phases.1-design.evidence", ".ai_log/x.md", cwd=repo)
    assert code == 0 and out["field"] == "phases.1-design.evidence" and out["value"] == ".ai_log/x.md"  # type: ignore[index]
    # an append answers with what it added and the list's new length, never a copy of the list
    code, out = cli_json("bus", "append", S, "phases.1-design.evidence", ".ai_log/y.md", cwd=repo)
    assert code == 0 and isinstance(out, dict) and (out["value"], out["length"]) == (".ai_log/y.md", 2)
    assert [".ai_log/x.md"] not in out.values()
    code, out = cli_json("bus", "set", S, "phases.1-design.status", "in_progress", cwd=repo)
    assert code == 0 and out["value"] == "in_progress" and len(out["commit"]) == 40  # type: ignore[index]
    assert cli_json("bus", "get", S, "phases.1-design.status", cwd=repo) == (0, "in_progress")
    assert cli_json("bus", "get", S, "phases.1-design.evidence", cwd=repo) == (0, [".ai_log/x.md", ".ai_log/y.md"])
    assert cli_json("bus", "get", S, "phases.1-design", cwd=repo) == (
        0, {"evidence": [".ai_log/x.md", ".ai_log/y.md"], "status": "in_progress"})
    assert cli_json("bus", "get", S, "missing", cwd=repo) == (0, None)
    assert cli_json("bus", "get", S, cwd=repo)[1] == {
        "session": S, "phases": {"1-design": {"evidence": [".ai_log/x.md", ".ai_log/y.md"], "status": "in_progress"}}}
    code, out = cli_json("bus", "clear", S, cwd=repo)
    assert code == 0 and out["path"] == path and out["changed"] is True  # type: ignore[index]
    assert cli_json("bus", "clear", S, cwd=repo)[1]["commit"] is None  # type: ignore[index]


@pytest.mark.parametrize("args,code,error", [
    (["get", "2026-01-01-nope"], 1, "UNKNOWN_SESSION"),
    (["set", S, "phases.1-design.status", "finished"], 1, "VALIDATION_FAILED"),
    (["set", S, "phases.0-req.status", "todo"], 1, "ILLEGAL_TRANSITION"),
    (["append", S, "k", "x"], 1, "WRONG_TYPE"),
    (["append", S, "ev", ".ai_log/none.md", "--check-path"], 1, "EVIDENCE_MISSING"),
    (["set", S, "session", "x"], 1, "IMMUTABLE_FIELD"),
    (["set", "not-a-date", "k", "v"], 2, "INVALID_ID"),
    (["set", S, "a..b", "v"], 2, "INVALID_VALUE"),
    (["set", S, "k", "v", "--actor", "two words"], 2, "INVALID_ID"),
    (["init", S, "--clean", ".."], 2, "INVALID_VALUE"),
    (["set", S], 2, "INVALID_VALUE"),  # FIELD is required (the seed: "Error: field required", exit 1)
    (["frobnicate", S], 2, "INVALID_VALUE"),
])
def test_errors(repo: Path, sd: api.StateDir, args: list[str], code: int, error: str) -> None:
    session = sd.bus(S)  # made through the API: what is tested is the refusal through the CLI
    session.set("phases.0-req.status", "done")
    session.set("k", "v")
    before = snapshot(repo)
    proc = cli("bus", *args, "--json", cwd=repo)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] == error and "Traceback" not in proc.stderr
    if code == 2 or error == "UNKNOWN_SESSION":  # the text form: every bad-input path, and one refusal (the
        text = cli("bus", *args, cwd=repo)  # refusals are all printed by the one renderer tests/cli/test_init checks)
        assert text.returncode == code and text.stdout == "" and f"[{error}]" in text.stderr
        assert "Traceback" not in text.stderr
    assert snapshot(repo) == before


def test_values_may_look_like_options(repo: Path, store: Path) -> None:
    for value in ["-1", "- fix the login bug", "-rf", "--not-an-option", "--"]:
        assert cli("bus", "set", S, "v", value, cwd=repo).returncode == 0, value
        assert cli("bus", "get", S, "v", cwd=repo).stdout == f"{value}\n" or value == "--"
    assert cli("bus", "set", S, "v", "--", "--json", cwd=repo).stdout == ""  # after --, a value
    assert cli("bus", "get", S, "v", cwd=repo).stdout == "--json\n"


def test_actor_from_the_environment_and_clean_relative_to_the_cwd(repo: Path, store: Path) -> None:
    (repo / ".ai_log").mkdir()
    (repo / ".ai_log" / "stale.md").write_text("x")
    (repo / ".gitignore").write_text(".ai_log/\n")
    sub = repo / "sub"
    sub.mkdir()
    proc = cli("bus", "init", S, "--clean", "../.ai_log", cwd=sub, env={"STATEDIR_ACTOR": "el-capitan"})
    assert proc.returncode == 0, proc.stderr
    assert not (repo / ".ai_log" / "stale.md").exists()
    assert git(repo, "log", "-1", "--format=%(trailers:key=Statedir-Actor,valueonly)").strip() == "el-capitan"


def test_validate_covers_bus_sessions(repo: Path, store: Path, sd: api.StateDir) -> None:
    sd.bus(S).set("phases.1-design.status", "done")  # through the API: what is tested is validate
    assert cli_json("validate", cwd=repo) == (0, {"valid": True, "errors": []})
    path = store / "bus" / f"{S}.yaml"
    path.write_text(path.read_text().replace("done", "finished"))
    code, out = cli_json("validate", cwd=repo)
    assert code == 1 and out["errors"][0]["file"] == f"bus/{S}.yaml"  # type: ignore[index]
    assert cli("validate", str(path), cwd=repo).returncode == 1


def test_the_state_file_path_names_its_session(repo: Path, store: Path, tmp_path: Path) -> None:
    """Agents handed `state_file` (what `init` printed) may pass it instead of the label."""
    state_file = cli("bus", "init", S, cwd=repo).stdout.strip()
    assert cli("bus", "set", state_file, "k", "v", cwd=repo).returncode == 0
    assert cli("bus", "get", f"bus/{S}.yaml", "k", cwd=store).stdout == "v\n"  # relative to the cwd
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / f"{S}.yaml").write_text("session: x\n")
    os_link = store / "bus" / "2026-01-01-link.yaml"
    os_link.symlink_to(tmp_path / "elsewhere" / f"{S}.yaml")
    before = snapshot(repo)
    for other in ["/etc/passwd", str(tmp_path / "elsewhere" / f"{S}.yaml"), f"state/bus/../bus/../../{S}.yaml",
                  str(os_link), f"state/bus/{S}.json", "state/bus/not-a-label.yaml"]:
        proc = cli("bus", "set", other, "k", "w", "--json", cwd=repo)
        assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "INVALID_ID", other
    assert snapshot(repo) == before


def test_the_pre_commit_hook_checks_bus_sessions() -> None:
    from statedir.files import yaml

    hook = yaml.load((ROOT / ".pre-commit-hooks.yaml").read_bytes())[0]
    files = re.compile(hook["files"])
    assert files.search(f"state/bus/{S}.yaml") and files.search(f"bus/{S}.yaml")
    assert not files.search("config/bus/routes.yaml") and not files.search(f"state/bus/{S}.json")


@pytest.mark.parametrize("verb", ["init", "set", "append", "clear"])
def test_every_change_waits_for_the_store_lock(repo: Path, store: Path, sd: api.StateDir, verb: str) -> None:
    import fcntl

    sd.bus(S).set("k", "v")  # through the API: what is tested is the CLI waiting for the lock
    args = {"init": [S], "set": [S, "k", "w"], "append": [S, "list", "x"], "clear": [S]}[verb]
    before = snapshot(repo)
    with open(store / ".statedir.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = cli("bus", verb, *args, "--json", cwd=repo, env={"STATEDIR_LOCK_TIMEOUT": "0.3"})
    assert proc.returncode == 3 and json.loads(proc.stdout)["error"]["code"] == "LOCK_TIMEOUT"
    assert snapshot(repo) == before
    assert cli("bus", verb, *args, cwd=repo).returncode == 0


def test_a_write_tells_a_person_at_a_terminal_and_a_script_nothing(store: Path) -> None:
    """pipeline-state.sh's `set` and `append` print nothing, and in a pipe statedir's don't either;
    a person whose stderr is a terminal sees what was written and its commit."""
    from tests.support.util import on_terminal

    proc, shown = on_terminal(["bus", "set", S, "phases.0-prd.status", "done"], store.parent, "stderr")
    assert proc.returncode == 0 and proc.stdout == b""
    assert shown.startswith("ok  ") and "phases.0-prd.status = done" in shown and "[" in shown
    proc, shown = on_terminal(["bus", "append", S, "phases.0-prd.outputs.files", "a.md"], store.parent, "stderr")
    assert proc.returncode == 0 and proc.stdout == b"" and shown.startswith("ok  ")
    piped = cli("bus", "set", S, "phases.1-design.status", "in_progress", cwd=store.parent)
    assert piped.returncode == 0 and piped.stdout == "" and piped.stderr == ""

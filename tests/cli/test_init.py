"""The CLI as a subprocess in real git repositories: wiring, exit codes, JSON, help."""
from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from statedir import api
from tests.support.util import CLEAR_ARGS, ROOT, call, cli, cli_json, on_terminal, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI

COMMANDS = ["init", "templates", "new", "runs", "show", "get", "status", "next", "stage", "output", "pipeline", "set",
            "bind", "material", "integrity", "revision", "loop", "prereq", "observe", "confirm", "redo", "log",
            "validate", "resume", "seal", "demo", "diff", "versions", "rollback", "verify", "doctor"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one): made by `init`, which tests of its own check."""
    return repo / "state"


def ok(*args: str, cwd: Path) -> dict:
    code, out = cli_json(*args, cwd=cwd)
    assert code == 0, out
    return out  # type: ignore[return-value]


def test_every_command_has_help_and_is_documented() -> None:
    from tests.support.docs_text import documentation

    readme = documentation()
    listed = cli("--help").stdout
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\s", listed, re.M), f"{command} missing from --help"
        code, out, _ = call([command, "--help"])  # in this process: ~40 CLI starts spared
        assert code == 0 and "Usage:" in out and len(out) > 80, command
        assert f"statedir {command}" in readme, f"neither README nor docs/ documents `statedir {command}`"
    assert "..." not in listed.partition("\n")[2], "a command's line in --help is cut short"
    assert "\nOther:" not in listed, "every command sits under a heading of registry.PANELS"
    for group in ("bus", "signers"):
        # (past the usage lines, which end in `[ARGS]...` and wrap where the console is narrow)
        assert "..." not in call([group, "--help"])[1].partition("\n\n")[2], f"{group} --help cuts a line short"


def test_init_makes_a_store_and_is_idempotent(isolated: Path) -> None:
    proc = cli("init", cwd=isolated)
    assert proc.returncode == 0, proc.stderr
    assert f"{isolated} was in no git repository: ran `git init` there" in proc.stdout  # said, not silent
    store = isolated / "state"
    for name in ("statedir.yaml", ".gitattributes", ".schemas/run-state.schema.json"):
        assert (store / name).is_file()
    assert (isolated / ".git").is_dir()
    head = git(isolated, "rev-parse", "HEAD")
    before = snapshot(isolated)
    again = cli("init", cwd=isolated)
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert git(isolated, "rev-parse", "HEAD") == head and snapshot(isolated) == before


@pytest.mark.slow  # a whole run, stage by stage through the CLI
def test_a_whole_run_reads_as_the_story_of_the_paper(store: Path) -> None:
    repo = store.parent
    draft = repo / "draft.md"
    draft.write_text("draft\n")
    steps = [
        ["new", "p1", "--topic", "AI and QA"],
        ["stage", "p1", "1", "in_progress", "--turns", "#1..#2"],
        ["material", "p1", "rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"],
        ["stage", "p1", "1", "completed", "--turns", "#1..#15"],
        ["confirm", "p1"],
        ["material", "p1", "paper_draft", "--file", str(draft), "--upstream", "research_v1"],
        ["stage", "p1", "2", "completed"],
        ["confirm", "p1", "--response", "just-continue"],
        ["integrity", "p1", "2.5", "PASS", "--refs-total", "62", "--refs-verified", "62",
         "--actor", "integrity_verification"],
        ["checklist", "p1", "2.5", *CLEAR_ARGS, "--actor", "integrity_verification"],
        ["stage", "p1", "2.5", "completed"],
        ["confirm", "p1", "--response", "continue"],
        ["material", "p1", "review_reports"], ["material", "p1", "revision_roadmap"],
        ["stage", "p1", "3", "completed", "--decision", "major_revision"],
        ["confirm", "p1", "--response", "continue"],
        ["material", "p1", "revised_draft", "--file", str(draft)],
        ["revision", "p1", "--items-total", "5", "--items-addressed", "5"],
        ["stage", "p1", "4", "completed"],
        ["confirm", "p1"],
        ["material", "p1", "re_review_report"],
        *[["contract", "p1", "3'", part, "--file", str(draft)] for part in ("manifest", "criteria", "evidence", "claims")],
        ["contract", "p1", "3'", "check", "--exit-code", "0", "--file", str(draft)],
        ["stage", "p1", "3'", "completed", "--decision", "minor_revision"],
        ["confirm", "p1", "--response", "continue"],
        ["integrity", "p1", "4.5", "PASS", "--refs-total", "62", "--refs-verified", "62",
         "--actor", "integrity_verification"],
        ["checklist", "p1", "4.5", *CLEAR_ARGS, "--actor", "integrity_verification"],
        ["stage", "p1", "4.5", "completed"],
        ["confirm", "p1", "--response", "continue", "--format", "apa7"],
        ["material", "p1", "final_paper"],
        ["stage", "p1", "5", "completed"],
        ["confirm", "p1"],
        ["confirm", "p1", "--response", "done"],
    ]
    commits = []
    for step in steps:
        out = ok(*step, cwd=repo)
        assert out["run_id"] == "p1" and re.fullmatch(r"[0-9a-f]{40}", out["commit"])
        commits.append(out["commit"])
    assert len(set(commits)) == len(steps)
    assert ok("get", "p1", "pipeline_state", cwd=repo) == "completed"
    assert ok("get", "p1", "stages.2.5.status", cwd=repo) == "completed"
    assert ok("get", "p1", "current_version.paper_draft", cwd=repo) == "paper_draft_v2"
    assert ok("get", "p1", "stages.4p.status", cwd=repo) == "skipped"
    subjects = git(repo, "log", "--format=%s", "--", "state/runs/p1").splitlines()
    assert len(subjects) == len(steps)
    assert subjects[0] == "stage 6 acknowledged: pipeline completed"
    assert "revision round 1 at stage 4: 5/5 items" in subjects
    log = ok("log", "p1", cwd=repo)
    assert [e["commit"] for e in log] == commits[::-1]
    plain = ("action", "actor", "by", "commit", "reason", "run_id", "statedir", "summary", "time")
    answered = tuple(sorted((*plain, "answered_by", "channel", "via")))  # the user's answers the orchestrator relayed
    assert {tuple(sorted(e)) for e in log} == {plain, answered}
    assert all(e["statedir"] for e in log)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", e["time"]) for e in log)
    assert log[-1]["action"] == "new" and {e["actor"] for e in log} == {"pipeline_orchestrator",
                                                                         "integrity_verification", "user"}
    relayed = [e for e in log if e["actor"] == "user"]  # every MANDATORY checkpoint: the user's, carried by the agent
    assert relayed and all((e["action"], e["answered_by"], e["via"], e["channel"], e["by"]) ==
                           ("confirm", "user", "pipeline_orchestrator", "cli", "user via pipeline_orchestrator (cli)")
                           for e in relayed)
    assert ok("validate", cwd=repo) == {"valid": True, "errors": []}
    status = ok("status", "p1", cwd=repo)
    assert "Stage 3'  RE-REVIEW (2nd)   [v] Minor Revision" in status["dashboard"]
    assert status["line"].startswith("Pipeline: [v]RES -> [v]WRT -> [v]INT -> [v]REV")
    ars = ok("show", "p1", "--format", "ars", cwd=repo)
    assert ars["run_id"] == "p1" and ars["pipeline_state"] == "completed"
    assert list(ars["stages"]) == ["1", "2", "2.5", "3", "4", "3p", "4p", "4.5", "5", "6"]
    assert ars["revision_history"][0]["stage"] == "3 -> 4"


def test_each_commit_has_the_trailers_and_only_store_files(store: Path) -> None:
    repo = store.parent
    (repo / "mine.txt").write_text("mine\n")
    git(repo, "add", "mine.txt")
    (repo / "unstaged.txt").write_text("unstaged\n")
    ok("new", "r1", "--topic", "t", cwd=repo)
    ok("stage", "r1", "1", "in_progress", "--actor", "pipeline_orchestrator", cwd=repo)
    body = git(repo, "log", "-1", "--format=%B")
    assert "Statedir-Run: r1\nStatedir-Actor: pipeline_orchestrator\nStatedir-Action: stage" in body
    names = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert names and all(n.startswith("state/runs/r1/") for n in names)
    status = git(repo, "status", "--porcelain")
    assert "A  mine.txt" in status and "?? unstaged.txt" in status
    assert "state/" not in status
    assert "mine.txt" not in git(repo, "log", "--name-only", "--format=")


def test_user_hooks_do_not_run_for_state_commits(store: Path) -> None:
    repo = store.parent
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("pre-commit", "commit-msg", "post-commit"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {repo}/{name}.ran\nexit 1\n")
        (hooks / name).chmod(0o755)
    ok("new", "r1", "--topic", "t", cwd=repo)
    assert not list(repo.glob("*.ran"))


def test_a_refused_command_changes_nothing(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    before = snapshot(repo)
    attempts = [
        (["stage", "r1", "3", "in_progress"], 1, "ILLEGAL_TRANSITION"),
        (["stage", "r1", "2.5", "skipped"], 1, "ILLEGAL_TRANSITION"),
        (["integrity", "r1", "2.5", "PASS", "--refs-total", "1", "--refs-verified", "1"], 1, "PERMISSION_DENIED"),
        (["confirm", "r1"], 1, "ILLEGAL_TRANSITION"),
        (["stage", "r1", "9", "in_progress"], 2, "UNKNOWN_STAGE"),
        (["stage", "nope", "1", "in_progress"], 2, "UNKNOWN_RUN"),
        (["stage", "../../etc", "1", "in_progress"], 2, "INVALID_ID"),
        (["material", "r1", "nonsense"], 2, "UNKNOWN_MATERIAL"),
        (["set", "r1", "run_id", "x", "--reason", "r"], 1, "IMMUTABLE_FIELD"),
        (["stage", "r1", "1", "in_progress", "--turns", "lots"], 2, "INVALID_VALUE"),
        (["new", "r1", "--topic", "again"], 2, "RUN_EXISTS"),
        (["stage", "r1"], 2, "INVALID_VALUE"),
    ]
    for args, code, error in attempts:
        rc, out = cli_json(*args, cwd=repo)
        assert (rc, out["error"]["code"]) == (code, error), (args, out)  # type: ignore[index]
        assert set(out["error"]) == {"code", "message", "details"}  # type: ignore[arg-type]
        plain = cli(*args, cwd=repo)
        lines = plain.stderr.splitlines()  # one line; a usage error adds the usage and where to read more,
        if lines[1:] and lines[1] == "    what is legal now: statedir next r1":  # a run's refusal, where to look
            lines = lines[:1]
        assert plain.returncode == code and plain.stdout == "" and (
            len(lines) == 1 or (len(lines) == 3 and lines[1].startswith("Usage: statedir ") and "--help" in lines[2]))
        assert "Traceback" not in plain.stderr
    assert snapshot(repo) == before


def test_json_is_one_line_for_a_program_and_indented_at_a_terminal(store: Path, sd: api.StateDir) -> None:

    repo = store.parent
    sd.new("r1", topic="t")
    piped = cli("runs", "--json", cwd=repo)
    assert piped.stdout.count("\n") == 1 and json.loads(piped.stdout)[0]["run_id"] == "r1"
    proc, shown = on_terminal(["runs", "--json"], repo, "stdout")
    assert proc.returncode == 0
    text = shown.replace("\r\n", "\n")
    assert text.startswith("[\n  {\n    \"run_id\": \"r1\"") and json.loads(text) == json.loads(piped.stdout)


def test_no_store_is_exit_3(isolated: Path) -> None:
    rc, out = cli_json("runs", cwd=isolated)
    assert rc == 3 and out["error"]["code"] == "NOT_A_STORE"  # type: ignore[index]


def test_store_is_found_from_a_subdirectory_and_by_env(store: Path) -> None:
    sub = store.parent / "deep" / "er"
    sub.mkdir(parents=True)
    ok("new", "r1", "--topic", "t", cwd=sub)
    rc, rows = cli_json("runs", cwd=store.parent.parent, env={"STATEDIR_STORE": str(store)})
    assert rc == 0 and rows == [{"run_id": "r1", "template": "academic-pipeline",
                                 "pipeline_state": "initializing", "current_stage": "1"}]


def test_runs_lists_an_unreadable_run_with_its_error(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    sd.new("r2", topic="t")
    (store / "runs" / "r1" / "state.yaml").write_text("run_id: [r1\n")
    rc, rows = cli_json("runs", cwd=repo)
    assert rc == 0 and [r["run_id"] for r in rows] == ["r1", "r2"]  # type: ignore[index]
    assert rows[0]["error"]["code"] == "BAD_FILE" and rows[0]["pipeline_state"] is None  # type: ignore[index]
    assert rows[1] == {"run_id": "r2", "template": "academic-pipeline", "pipeline_state": "initializing",
                       "current_stage": "1"}  # type: ignore[index]
    proc = cli("runs", cwd=repo)
    assert proc.returncode == 0 and "r2      academic-pipeline  initializing" in proc.stdout
    assert proc.stderr.startswith("warning: run r1 cannot be read: runs/r1/state.yaml:2:")


def test_lock_timeout(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    before = snapshot(repo)
    with open(store / ".statedir.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        rc, out = cli_json("stage", "r1", "1", "in_progress", cwd=repo, env={"STATEDIR_LOCK_TIMEOUT": "0.3"})
    assert rc == 3 and out["error"]["code"] == "LOCK_TIMEOUT"  # type: ignore[index]
    assert snapshot(repo) == before
    ok("stage", "r1", "1", "in_progress", cwd=repo)


def test_show_get_status_and_prereq(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    doc = ok("show", "r1", "--format", "json", cwd=repo)
    assert doc["stages"]["2.5"]["status"] == "pending" and "history" in doc
    assert cli("show", "r1", cwd=repo).stdout.startswith("run_id: r1")
    assert ok("get", "r1", "materials.paper_draft", cwd=repo) is False
    assert cli("get", "r1", "stages.2.5.name", cwd=repo).stdout == "INTEGRITY\n"
    rc, out = cli_json("get", "r1", "stages.7.status", cwd=repo)
    assert rc == 2
    line = cli("status", "r1", "--line", cwd=repo).stdout.strip()
    # 3.23 names 3' and 4' unmistakably (3.22: RE-REV and RE-REV', which read alike)
    assert line == ("Pipeline: [ ]RES -> [ ]WRT -> [ ]INT -> [ ]REV -> [ ]REVISE -> [ ]RE-REVIEW -> "
                    "[ ]RE-REVISE -> [ ]F-INT -> [ ]FIN -> [ ]SUM")
    rc, report = cli_json("prereq", "r1", "2.5", cwd=repo)
    assert rc == 1 and report == {"prerequisites_met": False, "missing_required": ["paper_draft"],
                                  "missing_recommended": [], "warning": None}
    rc, report = cli_json("prereq", "r1", "2", cwd=repo)
    assert rc == 0 and report["missing_recommended"] == ["rq_brief", "bibliography", "synthesis_report"]


def test_files_are_stable_and_start_with_the_schema_line(store: Path, sd: api.StateDir) -> None:
    from statedir.files import yaml

    repo = store.parent
    sd.new("r1", topic="t")
    ok("stage", "r1", "1", "in_progress", cwd=repo)
    for path in (store / "runs" / "r1").rglob("*.yaml"):
        raw = path.read_text()
        assert raw.startswith("# yaml-language-server: $schema=")
        ref = raw.splitlines()[0].split("=", 1)[1]
        assert (path.parent / ref).resolve().is_file(), ref
        if "history" not in path.parts:
            assert yaml.dump(yaml.to_plain(yaml.load(raw)), ref) == raw


def test_hand_comments_survive_a_transition(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    state = store / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("topic: t\n", "topic: t  # chosen by the lead\n"))
    git(repo, "commit", "-qam", "hand note")
    ok("set", "r1", "language", "de", "--reason", "German venue", cwd=repo)
    text = state.read_text()
    assert "topic: t  # chosen by the lead\n" in text and "language: de\n" in text


def test_a_symlink_planted_in_the_store_is_refused(store: Path, sd: api.StateDir, tmp_path: Path) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    outside = tmp_path / "outside.yaml"
    outside.write_text("x: 1\n")
    stage = store / "runs" / "r1" / "stages" / "1.yaml"
    stage.parent.mkdir(exist_ok=True)  # a new run writes no stage file until a stage has something to say
    stage.symlink_to(outside)
    rc, out = cli_json("stage", "r1", "1", "in_progress", cwd=repo)
    assert rc == 3 and out["error"]["code"] == "CORRUPT_STORE"  # type: ignore[index]
    assert outside.read_text() == "x: 1\n"


def test_own_template_file_and_linear(store: Path) -> None:
    repo = store.parent
    mine = repo / "mine.yaml"
    mine.write_text((ROOT / "templates" / "linear.yaml").read_text().replace("name: linear", "name: mine"))
    ok("new", "l1", "--topic", "t", "--template", str(mine), cwd=repo)
    assert (store / "templates" / "mine.yaml").is_file()
    rows = ok("templates", cwd=repo)
    assert {"name": "mine", "version": "1", "source": "store", "title": "Linear Pipeline"} in rows
    ok("stage", "l1", "plan", "in_progress", cwd=repo)
    ok("stage", "l1", "plan", "done", cwd=repo)
    assert ok("get", "l1", "pipeline_state", cwd=repo) == "awaiting_confirmation"
    assert ok("validate", cwd=repo) == {"valid": True, "errors": []}
    bad = repo / "bad.yaml"
    bad.write_text(mine.read_text().replace("  - {from: plan, to: build}", "  - {from: plan, to: nowhere}"))
    rc, out = cli_json("new", "l2", "--topic", "t", "--template", str(bad), cwd=repo)
    assert rc == 2 and out["error"]["code"] == "BAD_FILE"  # type: ignore[index]
    line = next(i for i, text in enumerate(bad.read_text().splitlines(), 1) if "nowhere" in text)
    assert f"bad.yaml:{line}:" in out["error"]["message"]  # type: ignore[index]


def test_validate_reports_every_problem(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")  # a stage with something to say has a file of its own
    stage = store / "runs" / "r1" / "stages" / "1.yaml"
    stage.write_text(stage.read_text().replace("status: in_progress", "status: 7") + "bogus: true\n")
    (store / "runs" / "r1" / "stages" / "2.yaml").write_text("a: [1\n")
    proc = cli("validate", cwd=repo)
    assert proc.returncode == 1
    assert "runs/r1/stages/1.yaml::$.status: 7 is not of type 'string'" in proc.stdout
    assert "runs/r1/stages/1.yaml::$: Additional properties are not allowed" in proc.stdout
    assert "runs/r1/stages/2.yaml::$: line 2:" in proc.stdout
    rc, out = cli_json("validate", str(stage), cwd=repo)
    assert rc == 1 and len(out["errors"]) == 3  # type: ignore[index]  # type, enum of the template, extra key


@pytest.mark.slow  # the demo: a whole run
def test_demo_runs() -> None:
    proc = cli("demo")
    assert proc.returncode == 0, proc.stderr
    assert "refused, as it should be" in proc.stdout and "ILLEGAL_TRANSITION" in proc.stdout
    assert "Academic Pipeline Status" in proc.stdout and "audit log" in proc.stdout
    assert "stage 6 acknowledged: pipeline completed" in proc.stdout
    assert "statedir-demo-" not in proc.stdout, "no path printed that is gone when the demo ends"
    assert "throwaway repository" in proc.stdout


def test_env_actor(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    rc, out = cli_json("stage", "r1", "1", "in_progress", cwd=repo, env={"STATEDIR_ACTOR": "deep-research"})
    assert rc == 1 and out["error"]["code"] == "PERMISSION_DENIED"  # type: ignore[index]
    assert os.environ.get("STATEDIR_ACTOR") is None


def test_a_verified_passport_reads_as_stale_after_24_hours(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r1", topic="t")
    sd.material("r1", ["paper_draft"])
    passport = store / "runs" / "r1" / "materials" / "paper_draft_v1.yaml"
    text = passport.read_text().replace("verification_status: UNVERIFIED", "verification_status: VERIFIED")
    fresh = text.replace("integrity_pass_date: null", "integrity_pass_date: '2999-01-01T00:00:00Z'")
    passport.write_text(fresh)
    assert ok("get", "r1", "passports.paper_draft_v1.verification_status", cwd=repo) == "VERIFIED"
    passport.write_text(text.replace("integrity_pass_date: null", "integrity_pass_date: '2020-01-01T00:00:00Z'"))
    assert ok("get", "r1", "passports.paper_draft_v1.verification_status", cwd=repo) == "STALE"


def test_init_in_a_repository_runs_no_git_init_and_says_none(repo: Path) -> None:
    code, out = cli_json("init", cwd=repo)
    assert code == 0 and "git_init" not in out  # type: ignore[operator]
    assert "git init" not in cli("init", "other", "--new-store", cwd=repo).stdout
    other = repo / "elsewhere"
    other.mkdir()
    code, out = cli_json("init", cwd=other)  # inside repo's work tree still
    assert code == 0 and "git_init" not in out  # type: ignore[operator]


def test_init_refuses_what_is_already_there_and_leaves_it(isolated: Path) -> None:
    (isolated / "afile").write_text("mine\n")
    (isolated / "full").mkdir()
    (isolated / "full" / "x").write_text("mine\n")
    for target in ("afile", "full"):
        rc, out = cli_json("init", target, cwd=isolated)
        assert rc == 2 and out["error"]["code"] == "INVALID_VALUE"  # type: ignore[index]
    assert (isolated / "afile").read_text() == "mine\n" and os.listdir(isolated / "full") == ["x"]
    assert not (isolated / ".git").exists()


def test_the_dashboard_fits_any_template(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("l1", topic="t", template="linear")
    board = ok("status", "l1", cwd=repo)["dashboard"]
    assert "  Stage plan    PLAN              [ ] To do" in board
    assert "  Stage deliver DELIVER           [ ] To do" in board

"""The CLI habits a newcomer expects: --version, help, structured status, a validate summary,
template discovery, store discovery, warnings before surprises."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import statedir
from statedir import api
from tests.support.util import cli, cli_json, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI

STATUSES_OF_ACADEMIC = "pending in_progress completed skipped blocked"


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one)."""
    return repo / "state"


def test_version_and_bare_help(isolated: Path) -> None:
    proc = cli("--version")
    assert (proc.returncode, proc.stdout) == (0, f"statedir {statedir.__version__}\n")
    bare = cli()
    assert bare.returncode == 0 and bare.stdout == cli("--help").stdout and bare.stderr == ""
    assert "Runs:" in bare.stdout and "Transitions:" in bare.stdout and "error:" not in bare.stdout
    group = cli("bus")
    assert group.returncode == 0 and group.stdout.startswith("Usage: statedir bus") and group.stderr == ""


def test_stage_help_speaks_of_no_one_template() -> None:
    text = " ".join(cli("stage", "--help").stdout.split())
    assert STATUSES_OF_ACADEMIC not in text and "3p" not in text and "statedir templates NAME" in text


def test_templates_name_shows_a_templates_own_vocabulary(store: Path) -> None:
    proc = cli("templates", "linear", cwd=store)
    assert proc.returncode == 0
    assert "plan" in proc.stdout and "todo (initial) -> in_progress" in proc.stdout
    assert "pipeline_orchestrator: new stage" in proc.stdout and "pending" not in proc.stdout
    code, out = cli_json("templates", "academic-pipeline", cwd=store)
    assert code == 0 and "3p" in [s["id"] for s in out["stages"]]  # type: ignore[index]
    research = {"name": "research", "label": "research_v{N}",
                "materials": ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"]}
    assert research in out["series"]  # type: ignore[index]
    assert "  research_v{N}: rq_brief, methodology_blueprint" in cli("templates", "academic-pipeline", cwd=store).stdout
    assert {s["value"] for s in out["statuses"]} == set(STATUSES_OF_ACADEMIC.split())  # type: ignore[index]
    code, out = cli_json("templates", "nope", cwd=store)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE"  # type: ignore[index]
    assert cli("templates", cwd=store).stdout.count("linear") == 1


def test_status_json_has_the_structure_beside_the_text(store: Path, sd: api.StateDir) -> None:
    sd.new("r", template="linear")
    sd.stage("r", "plan", "in_progress")
    code, out = cli_json("status", "r", cwd=store)
    assert code == 0 and isinstance(out, dict)
    assert {"run_id", "dashboard", "line"} <= out.keys()
    assert out["pipeline_state"] == "running" and out["current_stage"] == "plan" and out["checkpoint"] is None
    assert out["stages"][0] == {"id": "plan", "display": "plan", "name": "PLAN", "status": "in_progress",
                                "marker": "[..]", "label": "In Progress", "current": True}
    sd.stage("r", "plan", "done")
    code, out = cli_json("status", "r", cwd=store)
    assert out["checkpoint"]["stage"] == "plan" and out["checkpoint"]["default"] == "build"  # type: ignore[index]


def test_validate_summary_and_paths_relative_to_here(store: Path, sd: api.StateDir) -> None:
    sd.new("r", template="linear")
    quiet = cli("validate", cwd=store)
    assert (quiet.returncode, quiet.stdout) == (0, "")  # a pipe (the pre-commit hook): silent on success
    loud = cli("validate", "-v", cwd=store)
    assert loud.returncode == 0 and loud.stdout.endswith("files checked: all valid\n")
    sd.stage("r", "plan", "in_progress")  # a stage with something to say has a file of its own
    stage = store / "runs/r/stages/plan.yaml"
    stage.write_text(stage.read_text().replace("status: in_progress", "status: pending"))
    below = store / "runs/r"
    bad = cli("validate", "-v", cwd=below)
    lines = bad.stdout.splitlines()
    assert bad.returncode == 1 and lines[0].startswith("stages/plan.yaml::$.status: ")
    assert (below / lines[0].split("::")[0]).is_file()  # the name opens from here
    assert lines[-1].endswith("1 problem in 1 file")
    code, out = cli_json("validate", cwd=below)
    assert code == 1 and out["errors"][0]["file"] == "runs/r/stages/plan.yaml"  # type: ignore[index]


def test_statedir_store_at_a_repository_root_finds_its_store(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r", template="linear")
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    code, out = cli_json("status", "r", cwd=elsewhere, env={"STATEDIR_STORE": str(repo)})
    assert code == 0 and out["run_id"] == "r"  # type: ignore[index]
    code, out = cli_json("runs", cwd=elsewhere, env={"STATEDIR_STORE": str(elsewhere / "nothing")})
    assert code == 3 and "statedir init" in out["error"]["message"]  # type: ignore[index]
    code, out = cli_json("runs", cwd=elsewhere, env={"STATEDIR_STORE": str(store / "runs")})
    assert code == 3 and f"nearest store above it is {store}" in out["error"]["message"]  # type: ignore[index]
    (elsewhere / "stores/one").mkdir(parents=True)
    statedir.init(elsewhere / "stores/one")
    code, out = cli_json("runs", cwd=repo, env={"STATEDIR_STORE": str(elsewhere / "stores")})
    assert code == 3 and "stores/one is:" in out["error"]["message"]  # type: ignore[index]


def test_init_below_a_store_warns_before_a_second_one(store: Path) -> None:
    sub = store.parent / "sub"
    sub.mkdir()
    proc = cli("init", cwd=sub)
    assert proc.returncode == 0 and "already holds a store at" in proc.stderr and str(store) in proc.stderr
    code, out = cli_json("init", "again", cwd=sub)
    assert code == 0 and any(str(store) in w for w in out["warnings"])  # type: ignore[index]


def test_a_detached_head_warning_says_the_commit_is_on_no_branch(store: Path, sd: api.StateDir) -> None:
    repo = store.parent
    sd.new("r", template="linear")
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=repo, check=True)
    proc = cli("stage", "r", "plan", "in_progress", "--json", cwd=repo)
    assert proc.returncode == 0
    assert any("on no branch" in w for w in json.loads(proc.stdout)["warnings"]) and "on no branch" in proc.stderr


def test_topic_is_needed_where_the_template_says_so(store: Path) -> None:
    before = snapshot(store.parent)
    code, out = cli_json("new", "a", cwd=store)
    assert code == 2 and "needs --topic" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(store.parent) == before
    code, out = cli_json("new", "b", "--template", "linear", cwd=store)
    assert code == 0
    assert cli("get", "b", "topic", "--json", cwd=store).stdout.strip() == "null"
    assert "Topic" not in cli("status", "b", cwd=store).stdout
    assert cli("validate", cwd=store).returncode == 0
    assert cli("verify", cwd=store).returncode == 0  # replay makes the same topic-less run
    assert os.path.exists(store / "runs/b/state.yaml")


@pytest.mark.parametrize("args", [["show", "r1", "--json"], []], ids=["a command", "bare statedir"])
def test_a_reader_that_goes_away_stops_the_output_quietly(store: Path, sd: api.StateDir, args: list[str]) -> None:
    """`statedir show r1 --json | head -1`: the pipe closes before statedir writes; no traceback."""
    import sys

    sd.new("r1", template="linear")
    proc = subprocess.Popen([sys.executable, "-m", "statedir", *args], cwd=store,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child has started: its first write meets a closed pipe
    stderr = proc.stderr.read().decode()
    assert proc.wait() == 141, stderr  # as git's (never click's 1, which would read as a refusal)
    assert stderr == ""


@pytest.mark.slow  # the demo run three times into a closed pipe
def test_demo_into_a_closed_pipe_exits_141_every_time(isolated: Path) -> None:
    """`statedir demo | head`: the reader leaves mid-output; never exit 1 (a refusal), never a traceback."""
    for _ in range(3):
        proc = subprocess.Popen(["bash", "-c", f"'{sys.executable}' -m statedir demo | head -c 10 >/dev/null; "
                                 "echo ${PIPESTATUS[0]} >&2"], cwd=isolated, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        _, err = proc.communicate(timeout=300)
        assert err.strip().splitlines()[-1] in ("0", "141"), err  # 0 where it finished before head left
        assert "Traceback" not in err


def test_aborting_needs_a_reason_and_changes_nothing_without_one(repo: Path, sd: api.StateDir) -> None:
    sd.new("p1", topic="T")
    before = snapshot(repo)
    proc = cli("pipeline", "p1", "aborted", "--json", cwd=repo)
    assert proc.returncode == 2
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "INVALID_VALUE" and error["details"]["argument"] == "reason"
    assert snapshot(repo) == before
    done = cli("pipeline", "p1", "aborted", "--reason", "the venue closed", "--json", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(cli("get", "p1", "pipeline_state", "--json", cwd=repo).stdout) == "aborted"


def test_aborting_at_a_terminal_asks_first(repo: Path, sd: api.StateDir) -> None:
    """A person at a terminal answers the question; 'n' leaves the run as it was."""
    sd.new("p1", topic="T")
    before = snapshot(repo)
    command = f"{sys.executable} -P -m statedir pipeline p1 aborted --reason stop"
    proc = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=repo, input="n\n", capture_output=True,
                          text=True, timeout=60)
    assert "Abort run p1 for good?" in proc.stdout
    assert proc.returncode != 0
    assert snapshot(repo) == before
    proc = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=repo, input="y\n", capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
    assert json.loads(cli("get", "p1", "pipeline_state", "--json", cwd=repo).stdout) == "aborted"


def test_loop_is_refused_outside_the_stages_that_revise(repo: Path, sd: api.StateDir) -> None:
    """`loop` counts a RE-REVISE round: at stage 1 it would use up the run's only one."""
    sd.new("p1", topic="T")
    before = snapshot(repo)
    proc = cli("loop", "p1", "--json", cwd=repo)
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "ILLEGAL_TRANSITION" and "4" in error["details"]["revising"]
    assert snapshot(repo) == before


@pytest.mark.parametrize("args", [["--help"], ["integrity", "--help"], ["bus", "--help"]])
def test_help_is_plain_text(args: list[str], isolated: Path) -> None:
    """No rich boxes (they cost start-up time and break in narrow terminals and pipes)."""
    out = cli(*args, cwd=isolated).stdout
    assert "Usage: statedir" in out and "╭" not in out and "│" not in out


@pytest.mark.parametrize(("args", "usage"), [
    (["stage"], "statedir stage [OPTIONS] RUN_ID STAGE STATUS"),
    (["material"], "statedir material [OPTIONS] RUN_ID NAMES..."),
    (["log"], "statedir log [OPTIONS] [RUN_ID]"),
    (["bus", "set"], "statedir bus set [OPTIONS] SESSION FIELD [VALUE]"),
    (["signers", "remove"], "statedir signers remove [OPTIONS] ACTOR [PUBLIC_KEY]"),
])
def test_usage_lines_name_arguments_as_help_does(args: list[str], usage: str, isolated: Path) -> None:
    """RUN_ID STAGE STATUS, as --help's Arguments list names them (typer would print `{run_id}`)."""
    out = cli(*args, "--help", cwd=isolated).stdout
    assert out.startswith(f"Usage: {usage}\n") and "{" not in out.splitlines()[0]


def test_sync_help_words_actor_and_expect_for_a_sync(isolated: Path) -> None:
    """sync asks no template's roles and writes no one run or bus session: its help says what its options do."""
    text = " ".join(cli("sync", "--help", cwd=isolated).stdout.split())
    assert "checked against the template's roles" not in text and "the bus session" not in text
    assert "named on the merge commit" in text and "anything in the store changed after REV" in text
    stage = " ".join(cli("stage", "--help", cwd=isolated).stdout.split())
    assert "checked against the template's roles" in stage and "(the run, the bus session)" in stage


def test_a_missing_argument_is_named_as_the_usage_line_names_it(isolated: Path) -> None:
    proc = cli("stage", "r1", cwd=isolated)
    assert proc.returncode == 2 and "Missing argument 'STAGE'" in proc.stderr
    assert "Usage: statedir stage [OPTIONS] RUN_ID STAGE STATUS" in proc.stderr


def test_messages_say_what_happened(repo: Path, sd: api.StateDir) -> None:
    """A filter that matches nothing is not an empty history; a session that never was is not cleared."""
    sd.new("p1", topic="T")
    assert cli("log", "p1", "--action", "nothing", cwd=repo).stdout.strip() == "no transitions match"
    proc = cli("bus", "clear", "2026-01-01-never", cwd=repo)
    assert proc.returncode == 0 and "nothing to clear" in proc.stdout and "cleared" not in proc.stdout


def test_observe_help_lists_every_key_a_report_may_have() -> None:
    from statedir.engine.rules.submissions import OBSERVER_FIELDS
    from tests.support.util import ROOT

    entry = json.loads((ROOT / "schemas/log-collaboration_depth.schema.json").read_text())["$defs"]["entry"]
    reported = set(entry["properties"]) - {"stage_id", "checkpoint_type", "request_id"}  # set by statedir
    assert reported == set(OBSERVER_FIELDS)
    text = " ".join(cli("observe", "--help").stdout.split())
    assert all(key in text for key in OBSERVER_FIELDS) and "advisory_only: true" in text


def test_a_report_refused_names_the_keys_it_may_have(repo: Path, sd: api.StateDir) -> None:
    sd.new("r1", topic="t")
    (repo / "obs.yaml").write_text("zone: productive\n")
    code, out = cli_json("observe", "r1", "--stage", "1", "--checkpoint", "FULL", "--report", "obs.yaml",
                         "--actor", "collaboration_depth_agent", cwd=repo)
    assert code == 1 and "timestamp, dialogue_log_ref, zone, scores" in out["error"]["message"]  # type: ignore[index]


@pytest.mark.parametrize(("text", "says"), [
    ("- zone: productive\n", "this one is a list"),
    ("just words\n", "this one is a single str value"),
    ("zone: productive\nadvisory_only: true\ncurrent_stage: '3'\n7: x\n", "this one also has '7', 'current_stage'"),
])
def test_a_mis_shaped_report_is_bad_input_naming_its_keys(repo: Path, sd: api.StateDir, text: str, says: str) -> None:
    sd.new("r1", topic="t")
    (repo / "obs.yaml").write_text(text)
    before = snapshot(repo)
    code, out = cli_json("observe", "r1", "--stage", "1", "--checkpoint", "FULL", "--report", "obs.yaml",
                         "--actor", "collaboration_depth_agent", cwd=repo)
    error = out["error"]  # type: ignore[index]
    assert (code, error["code"]) == (2, "INVALID_VALUE") and says in error["message"], error
    assert "timestamp, dialogue_log_ref, zone, scores, cross_model_divergence, advisory_only" in error["message"]
    assert snapshot(repo) == before


def test_a_report_from_outside_the_repository_has_its_keys_counted_not_repeated(repo: Path, sd: api.StateDir,
                                                                               tmp_path: Path) -> None:
    sd.new("r1", topic="t")
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("advisory_only: true\nprivate_token: 1\n")
    (repo / "link.yaml").symlink_to(outside)  # a link in the repository to a file outside it: outside
    for report in (str(outside), "link.yaml"):
        code, out = cli_json("observe", "r1", "--stage", "1", "--checkpoint", "FULL", "--report", report,
                             "--actor", "collaboration_depth_agent", cwd=repo)
        message = out["error"]["message"]  # type: ignore[index]
        assert code == 2 and "1 other key(s)" in message and "private_token" not in json.dumps(out), out


def test_an_unknown_material_is_answered_with_the_valid_names(repo: Path, sd: api.StateDir) -> None:
    sd.new("r1", topic="t")
    code, out = cli_json("material", "r1", "nonsense", cwd=repo)
    assert code == 2 and out["error"]["code"] == "UNKNOWN_MATERIAL"  # type: ignore[index]
    assert "its materials: rq_brief, methodology_blueprint" in out["error"]["message"]  # type: ignore[index]


@pytest.mark.slow  # a pseudo-terminal, waiting out a lock
def test_waiting_for_the_store_lock_says_so_once_at_a_terminal(repo: Path) -> None:
    import pty

    sd = statedir.open(statedir.init(repo / "state")["store"])
    sd.new("r1", topic="t")
    env = {"STATEDIR_LOCK_TIMEOUT": "0.8"}  # over locking.NOTICE_AFTER (0.5 s)
    with sd.store.locked():
        piped = cli("set", "r1", "topic", "u", "--reason", "r", cwd=repo, env=env)
        main, child = pty.openpty()
        try:
            proc = subprocess.run([sys.executable, "-P", "-m", "statedir", "set", "r1", "topic", "u", "--reason", "r"],
                                  cwd=repo, stdout=subprocess.PIPE, stderr=child, text=True, timeout=120,
                                  env={**os.environ, **env})
            os.close(child)
            said = b""
            while True:
                try:
                    chunk = os.read(main, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                said += chunk
        finally:
            os.close(main)
    assert piped.returncode == 3 and "waiting" not in piped.stderr and "LOCK_TIMEOUT" in piped.stderr
    text = said.decode()
    assert proc.returncode == 3 and text.count("waiting for the store lock") == 1 and "LOCK_TIMEOUT" in text


def test_a_repository_root_names_the_store_below_it(repo: Path) -> None:
    statedir.init(repo / "pipeline" / "state")
    for proc in (cli("runs", "--store", str(repo), cwd=repo), cli("runs", cwd=repo)):
        assert proc.returncode == 3 and "NOT_A_STORE" in proc.stderr
        assert str(repo / "pipeline" / "state") in proc.stderr and "--store" in proc.stderr
        assert "statedir init" not in proc.stderr


def test_a_run_without_a_topic_has_no_empty_topic_box(repo: Path, sd: api.StateDir) -> None:
    sd.new("l1", template="linear")
    sd.new("l2", template="linear", topic="Ship it")
    bare = cli("status", "l1", cwd=repo).stdout.splitlines()
    assert bare[2].startswith("+===") and bare[3].startswith("  Stage ")  # the stages right under the title
    assert not any(a.startswith("+===") and b.startswith("+---") for a, b in zip(bare, bare[1:], strict=False))
    topical = cli("status", "l2", cwd=repo).stdout.splitlines()
    assert topical[3].startswith("| Topic: Ship it") and topical[4].startswith("+---")


def test_validate_says_all_valid_at_a_terminal_and_nothing_in_a_pipe(repo: Path, sd: api.StateDir) -> None:
    import pty

    sd.new("r1", topic="t")
    assert cli("validate", cwd=repo).stdout == ""  # the hook's mode: silent on success
    main, child = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-P", "-m", "statedir", "validate"], cwd=repo, stdout=child,
                              stderr=subprocess.PIPE, timeout=120)
        os.close(child)
        said = os.read(main, 4096).decode()
    finally:
        os.close(main)
    assert proc.returncode == 0 and "checked: all valid" in said

"""`statedir research` as a subprocess: the seed's flags unchanged, JSON on stdout for every
action but --report, flat errors with statedir's exit codes, the lock, parallel writers, merges."""
from __future__ import annotations

import fcntl
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.research import commits, files, git, research
from tests.support.util import ROOT, cli, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI

ACTION_FLAGS = ["--create-project", "--create-question", "--start-run", "--complete-run", "--answer-question",
                "--abandon-question", "--record-result", "--record-claim", "--create-hypothesis",
                "--set-hypothesis-status", "--create-experiment", "--set-experiment-status", "--create-source",
                "--set-source-screening", "--set-source-evidence-tier", "--create-evidence", "--query",
                "--validate", "--rebuild-index", "--report"]
VALUE_FLAGS = ["--skill", "--mode", "--name", "--description", "--title", "--authors", "--year", "--doi", "--url",
               "--venue", "--evidence-tier", "--screening-status", "--exclusion-reason", "--stance", "--limitations",
               "--uncertainty-note", "--evidence-id", "--question", "--question-id", "--project-id",
               "--hypothesis-id", "--experiment-id", "--source-id", "--run-id", "--status", "--summary",
               "--artifact-role", "--artifact-path", "--statement", "--confidence", "--evidence", "--since",
               "--full", "--json"]


def test_help_lists_every_seed_flag_and_the_readme_documents_the_command() -> None:
    listed = cli("--help").stdout
    assert re.search(r"^\s+research\s", listed, re.M)
    proc = cli("research", "--help")  # a process of its own: in-process help takes the console an earlier test left
    code, out = proc.returncode, proc.stdout
    assert code == 0 and "Usage:" in out
    for flag in ACTION_FLAGS + VALUE_FLAGS:
        assert re.search(rf"^\s+{re.escape(flag)}\b", out, re.M), flag
    from statedir.research.evidence import ARTIFACT_ROLES  # resource-resolver's roles, offered by name

    assert all(role in " ".join(out.split()) for role in ARTIFACT_ROLES)
    from tests.support.docs_text import page

    assert "statedir research --start-run" in page("research")
    assert "statedir research" in (ROOT / "README.md").read_text()


@pytest.mark.slow  # a whole seed session through the CLI
def test_the_seed_calling_convention_end_to_end(store: Path) -> None:
    repo = store.parent
    rc, project = research("--create-project", "--name", "Offline Support Initiative", "--description", "d", cwd=repo)
    assert rc == 0 and project["id"].startswith("proj_") and project["status"] == "active"
    rc, run = research("--start-run", "--skill", "deep-research", "--mode", "full", "--question",
                       "Does this need offline support?", "--project-id", project["id"], cwd=repo)
    assert rc == 0 and run["question_id"].startswith("q_") and len(run["commit"]) == 40
    rc, result = research("--record-result", "--run-id", run["id"], "--summary", "Found 3 sources",
                          "--artifact-role", "bibliography", "--artifact-path", "sources.bib", cwd=repo)
    assert rc == 0 and result["artifact_ref"] == {"role": "bibliography", "path": "sources.bib"}
    rc, source = research("--create-source", "--title", "Offline-First Mobile UX Patterns", "--authors",
                          "Ng T, Osei K", "--year", "2025", "--doi", "10.1000/xyz123", "--skill", "bibliography_agent",
                          cwd=repo)
    assert rc == 0 and source["year"] == 2025 and source["created_by"] == "bibliography_agent"
    rc, found = research("--create-evidence", "--source-id", source["id"], "--question-id", run["question_id"],
                         "--statement", "Caching reduced friction", "--stance", "supports", cwd=repo)
    assert rc == 0 and found["stance"] == "supports"
    rc, claim = research("--record-claim", "--run-id", run["id"], "--statement", "Ship offline caching",
                         "--confidence", "high", "--evidence", "notes.md", "--evidence-id", found["id"], cwd=repo)
    assert rc == 0 and (claim["evidence_ref"], claim["evidence_id"]) == ("notes.md", found["id"])
    rc, closed = research("--complete-run", "--run-id", run["id"], "--status", "completed", cwd=repo)
    assert rc == 0 and closed["status"] == "completed" and "schema_version" not in closed
    rc, answered = research("--answer-question", "--question-id", run["question_id"], cwd=repo)
    assert rc == 0 and answered["status"] == "answered"
    rc, rows = research("--query", "--run-id", run["id"], cwd=repo)
    assert rc == 0 and [c["id"] for c in rows["claims"]] == [claim["id"]] and rows["runs"][0]["status"] == "completed"
    rc, clean = research("--validate", cwd=repo)
    assert (rc, clean) == (0, {"violations": [], "clean": True})
    rc, rebuilt = research("--rebuild-index", "--full", cwd=repo)
    assert rc == 0 and rebuilt["rebuilt"] == "full" and rebuilt["records"]["claims"] == 1
    report = cli("research", "--report", cwd=repo)
    assert report.returncode == 0 and report.stdout.startswith("1 run(s):\n")
    assert f"[completed] deep-research ({run['id']}) started " in report.stdout
    assert report.stdout.rstrip().endswith("-- 1 result(s), 1 claim(s)")
    assert cli("research", "--report", "--since", "2999-01-01", cwd=repo).stdout == "0 run(s) since 2999-01-01:\n"
    plain = cli("research", "--query", "--skill", "deep-research", cwd=repo)  # JSON even without --json
    assert plain.returncode == 0 and json.loads(plain.stdout)["runs"][0]["id"] == run["id"]
    assert cli("validate", "--json", cwd=repo).stdout.startswith('{"valid":true')


@pytest.mark.parametrize(("args", "code", "exit_code"), [
    (["--start-run", "--skill", "s", "--question", "Q", "--experiment-id", "exp_x"], "INVALID_VALUE", 2),
    (["--start-run", "--question-id", "q_20260101_abcdef", "--skill", "s"], "UNKNOWN_QUESTION", 2),
    (["--start-run"], "INVALID_VALUE", 2),
    (["--start-run", "--skill"], "INVALID_VALUE", 2),
    (["--start-run", "--skill", "s", "--bogus"], "INVALID_VALUE", 2),
    (["--start-run", "--complete-run", "--skill", "s"], "INVALID_VALUE", 2),
    ([], "INVALID_VALUE", 2),
    (["--create-source", "--title", "T", "--year", "twenty"], "INVALID_VALUE", 2),
    (["--create-evidence", "--source-id", "src_x", "--question-id", "q_x", "--statement", "S", "--stance", "agrees"],
     "INVALID_VALUE", 2),
    (["--complete-run", "--run-id", "run_x", "--status", "paused"], "INVALID_VALUE", 2),
    (["--record-claim", "--run-id", "../../x", "--statement", "S"], "INVALID_ID", 2),
    (["--query", "--since", "last week"], "INVALID_VALUE", 2),
    (["--query", "--run-id", "a", "--skill", "b"], "INVALID_VALUE", 2),
    (["--create-question", "--question", "\udcff"], "INVALID_VALUE", 2),  # undecodable argv bytes
])
def test_errors_are_flat_json_with_statedir_exit_codes_and_change_nothing(
        store: Path, args: list[str], code: str, exit_code: int) -> None:
    repo = store.parent
    before = snapshot(repo)
    proc = cli("research", *args, "--json", cwd=repo)
    assert "Traceback" not in proc.stderr
    out = json.loads(proc.stdout)
    assert proc.returncode == exit_code, proc.stdout
    assert out["error"] == code and isinstance(out["message"], str) and out["message"]
    assert snapshot(repo) == before


def test_an_error_without_json_is_still_json_on_stdout_but_report_errors_go_to_stderr(store: Path) -> None:
    proc = cli("research", "--complete-run", "--run-id", "run_nope", "--status", "completed", cwd=store.parent)
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"] == "UNKNOWN_RUN"
    assert json.loads(proc.stdout)["type"] == "RunNotFoundError"  # the seed's exception name
    proc = cli("research", "--report", "--since", "nonsense", cwd=store.parent)
    assert proc.returncode == 2 and proc.stdout == "" and "[INVALID_VALUE]" in proc.stderr


def test_no_store_is_an_environment_error(isolated: Path) -> None:
    rc, out = research("--start-run", "--skill", "s", cwd=isolated)
    assert rc == 3 and out["error"] == "NOT_A_STORE"


def test_lock_timeout_is_reported_as_json(store: Path) -> None:
    repo = store.parent
    before = snapshot(repo)
    with open(store / ".statedir.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        rc, out = research("--start-run", "--skill", "s", cwd=repo, env={"STATEDIR_LOCK_TIMEOUT": "0.3"})
    assert rc == 3 and out["error"] == "LOCK_TIMEOUT" and out["type"] == "LockTimeoutError"
    assert snapshot(repo) == before
    assert research("--start-run", "--skill", "s", cwd=repo)[0] == 0


# Slow: eight CLI processes racing for the lock (~3 CPU-s)
@pytest.mark.slow
def test_eight_parallel_start_runs_lose_nothing(store: Path) -> None:
    repo = store.parent
    rc, question = research("--create-question", "--question", "Q?", cwd=repo)
    research("--query", "--question-id", question["id"], cwd=repo)  # the index exists: every writer updates it
    start = commits(repo)

    def spawn(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "statedir", "research", *args, "--json"], cwd=repo,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    procs = [spawn("--start-run", "--skill", f"agent{n}", "--question-id", question["id"]) for n in range(8)]
    readers = [spawn("--query", "--question-id", question["id"]) for _ in range(4)]  # reading meanwhile
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    for reader in readers:
        out, err = reader.communicate(timeout=120)
        assert reader.returncode == 0 and err == "" and json.loads(out)["questions"][0]["id"] == question["id"]
    runs = [json.loads(out) for out, _ in outputs]
    assert len({r["id"] for r in runs}) == 8 and len({r["commit"] for r in runs}) == 8
    assert commits(repo) == start + 8
    assert sorted(files(store, "runs")) == sorted(r["id"] for r in runs)
    assert len(files(store, "hypotheses")) == 8 and len(files(store, "experiments")) == 8
    rc, rows = research("--query", "--question-id", question["id"], cwd=repo)
    assert sorted(r["id"] for r in rows["runs"]) == sorted(r["id"] for r in runs)
    assert git(repo, "status", "--porcelain") == ""


# Slow: two clones and a merge through the CLI (~1.5 CPU-s)
@pytest.mark.slow
def test_two_machines_adding_entities_merge_without_conflict(store: Path, tmp_path: Path) -> None:
    repo = store.parent
    research("--create-question", "--question", "Shared?", cwd=repo)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    assert cli("doctor", "--fix", cwd=clone).returncode == 0  # a fresh clone registers the merge driver
    rc, ours = research("--start-run", "--skill", "a", "--question", "Ours?", cwd=repo)
    rc, theirs = research("--start-run", "--skill", "b", "--question", "Theirs?", cwd=clone)
    research("--record-claim", "--run-id", theirs["id"], "--statement", "C", cwd=clone)
    merge = subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit", str(clone), "main"], cwd=repo,
                           capture_output=True, text=True)
    assert merge.returncode == 0, merge.stderr
    rc, rows = research("--query", "--run-id", theirs["id"], cwd=repo)
    assert rows["runs"][0]["skill"] == "b" and len(rows["claims"]) == 1
    assert research("--validate", cwd=repo)[1]["clean"] is True
    assert cli("validate", cwd=repo).returncode == 0


def test_at_a_terminal_an_action_reads_as_words_and_a_pipe_still_gets_json(store: Path) -> None:
    from tests.support.util import on_terminal

    work = store.parent
    proc, shown = on_terminal(["research", "--create-project", "--name", "QA", "--description", "d"], work, "stdout")
    assert proc.returncode == 0 and shown.startswith("ok  proj_") and "{" not in shown, shown
    assert re.search(r"^\s+name\s+QA\s*$", shown, re.M), shown
    project = re.search(r"proj_\w+", shown)[0]  # type: ignore[index]
    proc, shown = on_terminal(["research", "--query", "--project-id", project], work, "stdout")
    assert proc.returncode == 0 and re.search(rf"^\s+{project}\s+QA\s+active", shown, re.M), shown
    proc, shown = on_terminal(["research", "--query", "--project-id", project, "--json"], work, "stdout")
    assert json.loads(shown)["projects"][0]["id"] == project  # --json: JSON at a terminal too
    piped = cli("research", "--query", "--project-id", project, cwd=work)  # no --json: a pipe gets JSON
    assert piped.returncode == 0 and json.loads(piped.stdout)["projects"][0]["name"] == "QA"

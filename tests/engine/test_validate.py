"""`validate` (signers.yaml among what it checks) and the pre-commit hook, run by the real pre-commit tool."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from statedir import api
from statedir.engine import validate
from tests.support.signing import NEEDS_SSH_KEYGEN
from tests.support.util import ROOT, cli


def test_store_validation_collects_everything(repo: Path) -> None:
    sd = api.StateDir(Path(api.init(repo / "state")["store"]))
    sd.new("r1", topic="t")
    state = repo / "state" / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("pipeline_state: initializing", "pipeline_state: [1]")
                     + "loop_count: -1\n")  # a field at its default is not written: added by hand
    problems = validate.store(repo / "state")
    assert {(p.path, p.file) for p in problems} == {("$.pipeline_state", "runs/r1/state.yaml"),
                                                    ("$.loop_count", "runs/r1/state.yaml")}
    assert str(problems[0]).startswith("runs/r1/state.yaml::$.")


def test_store_validation_reports_a_symlinked_directory_without_entering_it(repo: Path,
                                                                            tmp_path: Path) -> None:
    sd = api.StateDir(Path(api.init(repo / "state")["store"]))
    sd.new("r1", topic="t")
    sd.new("r2", topic="t")
    sd.stage("r2", "1", "in_progress")  # its stages/ folder: made when a stage first has something to say
    assert validate.store(repo / "state") == []
    assert validate.store(repo / "state") == []  # again, from the parse cache
    elsewhere = tmp_path / "elsewhere"
    (repo / "state" / "runs" / "r2" / "stages").rename(elsewhere)
    (repo / "state" / "runs" / "r2" / "stages").symlink_to(elsewhere, target_is_directory=True)
    problems = validate.store(repo / "state")
    assert [(p.file, p.message) for p in problems] == [
        ("runs/r2/stages", "is a symlink; statedir files are regular files")]


def test_a_file_without_its_schema_line_is_reported(repo: Path) -> None:
    api.init(repo / "state")
    config = repo / "state" / "statedir.yaml"
    config.write_text(config.read_text().split("\n", 1)[1])
    problems = validate.files([config])
    assert len(problems) == 1 and "yaml-language-server" in problems[0].message


def test_files_outside_a_store_and_forced_schemas(isolated: Path) -> None:
    loose = isolated / "loose.yaml"
    loose.write_text("a: 1\n")
    assert "not inside a statedir store" in validate.files([loose])[0].message
    assert validate.files([ROOT / "templates" / "linear.yaml"], "template") == []
    assert validate.files([loose], "template")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_pre_commit_hook_with_the_real_pre_commit(repo: Path, tmp_path: Path) -> None:
    sd = api.StateDir(Path(api.init(repo / "state")["store"]))
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    env_home: dict[str, str] = {}  # pre-commit's environments: the session's (tests/support/util.isolate)
    stage = repo / "state" / "runs" / "r1" / "stages" / "1.yaml"
    stage.write_text(stage.read_text().replace("status: in_progress", "status: {x: 1}"))
    (repo / "notes.yaml").write_text("not: [a store file\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    run = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "statedir-validate",
                          "--all-files"], cwd=repo, capture_output=True, text=True, timeout=900,
                         env={**__import__("os").environ, **env_home})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "state/runs/r1/stages/1.yaml::$.status" in run.stdout
    assert "notes.yaml" not in run.stdout.split("statedir validate")[-1]
    stage.write_text(stage.read_text().replace("status: {x: 1}", "status: pending"))
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    again = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "statedir-validate",
                            "--all-files"], cwd=repo, capture_output=True, text=True, timeout=900,
                           env={**__import__("os").environ, **env_home})
    assert again.returncode == 0, again.stdout + again.stderr


def test_cli_validate_exit_codes(repo: Path) -> None:
    api.init(repo / "state")
    assert cli("validate", cwd=repo).returncode == 0
    bad = repo / "state" / "statedir.yaml"
    bad.write_text(bad.read_text() + "format_version: 2\n")
    proc = cli("validate", str(bad), cwd=repo)
    assert proc.returncode == 1 and "duplicate key" in proc.stdout


@pytest.mark.slow  # pre-commit builds the hook's environment
def test_the_readme_local_hook_runs_as_written(repo: Path, tmp_path: Path) -> None:
    """docs/cli.md's `repo: local` snippet, verbatim, with the real pre-commit and the installed statedir."""
    import os
    import re

    from tests.support.docs_text import page
    from tests.support.docs_text import section as docs_section

    section = docs_section(page("cli"), "## pre-commit")
    local = next(b for b in re.findall(r"```yaml\n(.*?)```", section, re.S) if "repo: local" in b)
    sd = api.StateDir(Path(api.init(repo / "state")["store"]))
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")
    (repo / ".pre-commit-config.yaml").write_text(local)
    stage = repo / "state" / "runs" / "r1" / "stages" / "1.yaml"
    stage.write_text(stage.read_text().replace("status: in_progress", "status: {x: 1}"))
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    env = {**os.environ,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, capture_output=True,
                         text=True, timeout=300, env=env)
    assert run.returncode == 1 and "state/runs/r1/stages/1.yaml::$.status" in run.stdout, run.stdout + run.stderr
    stage.write_text(stage.read_text().replace("status: {x: 1}", "status: pending"))
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    again = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo,
                           capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stdout + again.stderr


@NEEDS_SSH_KEYGEN  # `bound` makes keys
def test_validate_covers_signers(bound: api.StateDir, repo: Path) -> None:
    assert cli("validate", cwd=repo).returncode == 0
    path = repo / "state/signers.yaml"
    path.write_text(path.read_text().replace("ssh-ed25519 ", "ssh-ed25519x ", 1))
    proc = cli("validate", "--json", cwd=repo)
    assert proc.returncode != 0 and "signers.yaml" in proc.stdout

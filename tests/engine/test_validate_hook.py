"""The shipped pre-commit hook in a real `git commit`: a value the template does not know is
refused; a file outside every store (a Helm chart's templates/) is passed over.

The hook is installed from this repository's committed HEAD, as a user's config pins a rev."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from statedir import api
from tests.support.util import ROOT


def git(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=900)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_real_commit_through_the_hook(repo: Path, tmp_path: Path) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if not head:
        pytest.skip("the hook is installed from a committed revision of this repository")
    env = dict(os.environ)  # PRE_COMMIT_HOME: the session's (tests/support/util.isolate), built once
    sd = api.StateDir(Path(api.init(repo / "state")["store"]))
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")  # a stage with something to say has a file of its own
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: statedir-validate\n")
    git(repo, "add", ".pre-commit-config.yaml", env=env)
    git(repo, "commit", "-q", "-m", "pre-commit config", env=env)
    install = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, capture_output=True,
                             text=True, env=env, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr

    chart = repo / "chart" / "templates" / "deployment.yaml"  # a Helm chart: no statedir store above it
    chart.parent.mkdir(parents=True)
    chart.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .Values.name }}}\n")
    git(repo, "add", "chart", env=env)
    helm = git(repo, "commit", "-m", "a chart", env=env)
    assert helm.returncode == 0, helm.stdout + helm.stderr

    stage = repo / "state" / "runs" / "r1" / "stages" / "1.yaml"
    stage.write_text(stage.read_text().replace("status: in_progress", "status: bogus"))
    git(repo, "add", str(stage), env=env)
    before = git(repo, "rev-parse", "HEAD", env=env).stdout
    refused = git(repo, "commit", "-m", "hand edit", env=env)
    assert refused.returncode != 0
    assert "state/runs/r1/stages/1.yaml::$.status: 'bogus' is not one of" in refused.stdout + refused.stderr
    assert git(repo, "rev-parse", "HEAD", env=env).stdout == before

    stage.write_text(stage.read_text().replace("status: bogus", "status: in_progress"))
    git(repo, "add", str(stage), env=env)
    git(repo, "commit", "-q", "--allow-empty", "-m", "fixed", env=env)
    assert git(repo, "rev-parse", "HEAD", env=env).stdout != before

"""Evolving a template the store holds: edited in place with its `version:` bumped (committed by
hand), or given again through `new --template`; runs on the old version keep working on it."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import statedir
from statedir.engine import template
from tests.support.util import ROOT, cli, cli_json, snapshot


def _mine(repo: Path) -> Path:
    text = (ROOT / "templates/linear.yaml").read_text().replace("name: linear", "name: mine")
    (repo / "my.yaml").write_text(text)
    return repo / "my.yaml"


@pytest.mark.slow  # a template's versions through the store's history
def test_an_in_place_edit_with_a_bumped_version_keeps_old_runs_on_theirs(repo: Path) -> None:
    sd = statedir.open(statedir.init(repo / "state")["store"])
    sd.new("r1", template=str(_mine(repo)))
    sd.stage("r1", "plan", "in_progress")
    stored = repo / "state/templates/mine.yaml"
    text = stored.read_text()
    assert "version: '1'" in text
    stored.write_text(text.replace("version: '1'", "version: '2'").replace("title: ", "title: Edited ", 1))
    subprocess.run(["git", "commit", "-qam", "mine: version 2"], cwd=repo, check=True)
    assert cli("status", "r1", cwd=repo).returncode == 0
    moved = cli("stage", "r1", "plan", "done", cwd=repo)
    assert moved.returncode == 0, moved.stderr
    assert sd.get("r1", "template_version") == "1"
    code, new = cli_json("new", "r2", "--template", "mine", cwd=repo)
    assert code == 0 and sd.get("r2", "template_version") == "2"  # type: ignore[comparison-overlap]
    assert cli("validate", cwd=repo).returncode == 0
    found = sd.verify()["findings"]  # the in-place edit is a hand edit, and nothing else is
    assert [(f["kind"], f["file"]) for f in found] == [("hand_edit", "templates/mine.yaml")]
    sd.acknowledge(found[0]["commit"], reason="reviewed: version 2 of mine")
    assert sd.verify()["clean"]


def test_a_version_gone_from_history_too_is_refused_with_what_to_restore(repo: Path) -> None:
    sd = statedir.open(statedir.init(repo / "state")["store"])
    sd.new("r1", template=str(_mine(repo)))
    state = repo / "state/runs/r1/state.yaml"
    state.write_text(state.read_text().replace("template_version: '1'", "template_version: '7'"))
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=repo, check=True)
    code, out = cli_json("stage", "r1", "plan", "in_progress", cwd=repo)
    assert code == 3 and out["error"]["code"] == "CORRUPT_STORE"  # type: ignore[index]
    assert "templates/mine@7.yaml" in out["error"]["message"]  # type: ignore[index]


def test_the_documented_way_keeps_the_old_version_beside_the_new(repo: Path) -> None:
    sd = statedir.open(statedir.init(repo / "state")["store"])
    mine = _mine(repo)
    sd.new("r1", template=str(mine))
    mine.write_text(mine.read_text().replace("version: '1'", "version: '2'"))
    sd.new("r2", template=str(mine))
    assert (repo / "state/templates/mine@1.yaml").is_file()
    assert sd.stage("r1", "plan", "in_progress")["commit"]
    assert sd.verify()["clean"]


def test_a_copy_of_the_shipped_template_with_its_own_version_leaves_the_runs_on_the_shipped_one(
        repo: Path, sd: statedir.api.StateDir) -> None:
    """The store's own copy takes the name (templates/linear.yaml); a run made on the version
    statedir ships keeps reading, moving and verifying by it. (The small shipped template: a
    template brought by `new --template` has its whole flow explored, long for the academic one.)"""
    from statedir.files import schema

    shipped = (schema.data_dir("templates") / "linear.yaml").read_text()
    version = str(template.load("linear").doc["version"])
    assert cli_json("new", "r1", "--topic", "t", "--template", "linear", cwd=repo)[0] == 0
    mine = shipped.replace(f"version: '{version}'", "version: '99.1'", 1).replace(f"version: {version}\n",
                                                                               "version: '99.1'\n", 1)
    assert mine != shipped
    (repo / "mine.yaml").write_text(mine)
    assert cli_json("new", "r2", "--topic", "t", "--template", "mine.yaml", cwd=repo)[0] == 0
    for run, made_on in (("r1", version), ("r2", "99.1")):
        code, out = cli_json("status", run, cwd=repo)
        assert code == 0 and str(cli_json("get", run, "template_version", cwd=repo)[1]) == made_on, out
    code, out = cli_json("verify", cwd=repo)
    assert code == 0 and out["clean"], out  # type: ignore[index]


def test_an_older_version_statedir_keeps_is_no_template_for_a_new_run(repo: Path, sd: statedir.api.StateDir) -> None:
    from statedir.files import schema

    before = snapshot(repo)
    kept = schema.data_dir("templates") / "academic-pipeline@3.21.yaml"
    code, out = cli_json("new", "r1", "--topic", "t", "--template", str(kept), cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE", out  # type: ignore[index]
    assert "an older version statedir keeps for the runs made on it" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before

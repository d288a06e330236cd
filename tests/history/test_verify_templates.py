"""verify replays the template files `new --template FILE` writes by the rules of the write
path (`versions.stored_files`), and reports any file statedir never writes: an attributes
file inside the store, a file that is not YAML, a YAML file no schema covers, a symlink."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from statedir import api
from tests.support.history import forge, git
from tests.support.util import cli, own_template


def new(repo: Path, run: str, path: Path) -> None:
    proc = cli("new", run, "--topic", "t", "--template", str(path), cwd=repo)
    assert proc.returncode == 0, proc.stderr


def amend(repo: Path, files: dict[str, bytes]) -> str:
    """The last (legal) commit again, with `files` riding in it under the same trailers."""
    for rel, data in files.items():
        (repo / "state" / rel).write_bytes(data)
        git(repo, "add", "-f", str(repo / "state" / rel))
    git(repo, "commit", "-q", "--amend", "--no-edit")
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.slow  # a template's versions through the store's history
def test_stored_template_versions_verify_clean(sd: api.StateDir, repo: Path) -> None:
    v1 = own_template(repo.parent, "v1.yaml")
    v2 = own_template(repo.parent, "v2.yaml", ("version: '1'", "version: '2'"),
                      ("title: Linear Pipeline", "title: Mine"))
    for run, path in (("a", v1), ("b", v2), ("c", v1), ("d", v1)):  # b keeps @1; c brings 1 back, keeps @2
        new(repo, run, path)
    assert sorted(p.name for p in (repo / "state" / "templates").iterdir()) == [
        "mypipe.yaml", "mypipe@1.yaml", "mypipe@2.yaml"]
    assert sd.verify() == {"clean": True, "checked": 5, "findings": []}


def test_a_stored_version_rewritten_in_a_new_is_illegal(sd: api.StateDir, repo: Path) -> None:
    new(repo, "a", own_template(repo.parent, "v1.yaml"))
    new(repo, "b", own_template(repo.parent, "v1.yaml"))
    stored = repo / "state" / "templates" / "mypipe.yaml"
    sha = amend(repo, {"templates/mypipe.yaml": stored.read_bytes().replace(b"Linear Pipeline", b"Other rules")})
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "illegal", "templates/mypipe.yaml")]
    assert "already holds template 'mypipe' version 1" in findings[0]["message"]


def test_a_made_up_templates_action_is_illegal(sd: api.StateDir, repo: Path) -> None:
    text = own_template(repo.parent, "v1.yaml").read_bytes()
    sha = forge(repo, {"templates/mypipe.yaml": text}, action="templates")
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "illegal", "templates/mypipe.yaml")]
    assert "no replay for action 'templates'" in findings[0]["message"]


def test_files_statedir_never_writes_are_reported_once_each(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="t")
    sd.stage("p1", "1", "in_progress")
    sha = amend(repo, {"runs/p1/.gitattributes": b"*.yaml merge=union\n", "runs/p1/notes.txt": b"hi\n",
                       "runs/p1/extra.yaml": b"a: 1\n", ".schemas/readme.md": b"x\n"})
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [
        (sha, "illegal", ".schemas/readme.md"), (sha, "illegal", "runs/p1/.gitattributes"),
        (sha, "illegal", "runs/p1/extra.yaml"), (sha, "illegal", "runs/p1/notes.txt")]  # the stage itself replays
    assert all("statedir never writes" in f["message"] for f in findings)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_a_symlink_by_hand_is_reported_as_one(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="t")
    sd.stage("p1", "1", "in_progress")  # its stages/ folder
    os.symlink("/etc/passwd", repo / "state" / "runs" / "p1" / "stages" / "9.yaml")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a link")
    findings = sd.verify()["findings"]
    assert [(f["kind"], f["file"]) for f in findings] == [("hand_edit", "runs/p1/stages/9.yaml")]
    assert "a symbolic link" in findings[0]["message"]

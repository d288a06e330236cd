"""A template is its name, version and content digest (issue 30, point 5): a collaborator
cannot re-template a run by storing other content under a shipped template's name and version,
or under a version that lives only in history. The hostile history is made with plain git on
a collaborator's clone; the victim's clone is driven through the CLI."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from statedir.engine import template
from statedir.files import yaml
from statedir.store import layout
from tests.support.sync import cli_in, git, network, ok
from tests.support.util import cli, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


def evil(where: Path, name: str = "linear", version: str = "1") -> Path:
    """The shipped linear template, named and versioned as given, with a role of the collaborator's."""
    text = template.shipped()["linear"].read_text()
    text = text.replace("name: linear", f"name: {name}").replace("version: '1'", f"version: '{version}'")
    text = text.replace("roles:\n", "roles:\n  collab: {may: [stage, set, confirm, pipeline]}\n", 1)
    assert "collab:" in text
    where.write_text(text)
    return where


def _amend(clone: Path, edit: dict[str, bytes], message: tuple[str, str] | None = None) -> str:
    """The last commit again with `edit`'s files (store-relative) and its message edited: what a
    collaborator does with plain git to make statedir's own commit say something else."""
    for rel, data in edit.items():
        (clone / "state" / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / "state" / rel).write_bytes(data)
        git(clone, "add", "-f", f"state/{rel}")
    body = git(clone, "log", "-1", "--format=%B")
    if message is not None:
        body = body.replace(*message)
    git(clone, "commit", "-q", "--amend", "--no-verify", "-m", body)
    return git(clone, "rev-parse", "HEAD")


def _plant_and_use(c: dict[str, Path]) -> tuple[str, str]:
    """Collaborator b: a `new decoy` commit that also stores its own `linear` 1 (the shipped name
    and version, one role more), then a stage of the victim's run p1 by that role. Returns both shas."""
    ok(c["b"], "new", "decoy", "--template", "linear")
    stored = yaml.header(layout.schema_ref("templates/linear.yaml")).encode() + \
        evil(c["b"].parent / "evil.yaml").read_bytes().partition(b"\n")[2]  # as `new --template` stores it
    state_rel = "runs/decoy/state.yaml"
    state = (c["b"] / "state" / state_rel).read_bytes()  # the content it records (where it records one): b's
    state = re.sub(rb"template_digest: '[^']*'", lambda _: b"template_digest: '"
                   + template.parse(stored, "evil").digest.encode() + b"'", state)
    planted = _amend(c["b"], {"templates/linear.yaml": stored, state_rel: state})
    ok(c["b"], "stage", "p1", "plan", "in_progress")
    log = next((c["b"] / "state/runs/p1/history/transitions").glob("*.yaml"))
    text = log.read_bytes()
    head, sep, last = text.rpartition(b"actor: pipeline_orchestrator")
    forged = _amend(c["b"], {log.relative_to(c["b"] / "state").as_posix(): head + b"actor: collab" + last},
                    ("Statedir-Actor: pipeline_orchestrator", "Statedir-Actor: collab"))
    assert sep
    git(c["b"], "push", "-q", "origin", "HEAD:main")
    return planted, forged


def _untouched(clone: Path) -> dict[str, bytes]:
    """The branch, the index and the work tree: what a refusal leaves byte-identical (a fetch
    may add objects, remote refs and reflog lines)."""
    return {rel: data for rel, data in snapshot(clone).items()
            if not rel.startswith(".git/") or rel in (".git/index", ".git/HEAD", ".git/refs/heads/main")}


def _victim(tmp_path: Path) -> dict[str, Path]:
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "new", "p1", "--template", "linear")
    ok(c["a"], "sync")
    git(c["b"], "pull", "-q", "--ff-only")
    return c


def test_new_refuses_a_template_claiming_a_shipped_name_and_version_and_changes_nothing(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    before = snapshot(c["a"])
    proc = cli("new", "decoy", "--template", str(evil(tmp_path / "evil.yaml")), "--json", cwd=c["a"])
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 2 and error["code"] == "INVALID_VALUE", proc.stdout
    assert "'linear' version 1 already has other content (statedir ships it)" in error["message"]
    assert "version: '2'" in error["message"]
    assert snapshot(c["a"]) == before


@pytest.mark.slow  # two clones and a remote, each step through the CLI
def test_a_collaborators_copy_of_a_shipped_template_re_templates_no_run(tmp_path: Path) -> None:
    c = _victim(tmp_path)
    planted, forged = _plant_and_use(c)
    head = git(c["a"], "rev-parse", "HEAD")
    before = _untouched(c["a"])
    refused = cli("sync", "--json", cwd=c["a"])
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert _untouched(c["a"]) == before and git(c["a"], "rev-parse", "HEAD") == head
    assert planted[:10] in refused.stdout and forged[:10] in refused.stdout

    git(c["a"], "pull", "-q", "--ff-only")  # taken by hand all the same: verify names both
    found = json.loads(cli("verify", "--json", cwd=c["a"]).stdout)["findings"]
    assert {(f["commit"], f["kind"]) for f in found} == {(planted, "illegal"), (forged, "illegal")}
    stored = next(f for f in found if f["file"] == "templates/linear.yaml")
    assert stored["commit"] == planted
    assert "stores template 'linear' version 1 with other content than it has (statedir ships it)" in stored["message"]
    assert "PERMISSION_DENIED" in next(f["message"] for f in found if f["commit"] == forged)
    # the victim's run keeps the shipped rules, and a new run by name gets them too
    moved = cli("stage", "p1", "plan", "done", "--actor", "collab", "--json", cwd=c["a"])
    assert moved.returncode == 1 and json.loads(moved.stdout)["error"]["code"] == "PERMISSION_DENIED"
    ok(c["a"], "new", "p2", "--template", "linear")
    shipped = template.load("linear").digest
    assert f"template_digest: '{shipped}'" in (c["a"] / "state/runs/p2/state.yaml").read_text()
    assert cli("stage", "p2", "plan", "in_progress", "--actor", "collab", cwd=c["a"]).returncode == 1


@pytest.mark.slow  # a template's versions through the store's history
def test_a_version_only_history_holds_keeps_its_content(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    mine = evil(tmp_path / "mine.yaml", name="mine")
    ok(c["a"], "new", "m1", "--template", str(mine))
    stored = c["a"] / "state/templates/mine.yaml"  # evolved in place, as docs/templates.md describes
    stored.write_text(stored.read_text().replace("version: '1'", "version: '2'"))
    git(c["a"], "commit", "-qam", "mine: version 2")
    first = git(c["a"], "log", "--format=%H", "--", "state/templates/mine.yaml").split()[-1]
    other = tmp_path / "other.yaml"
    other.write_text(mine.read_text().replace("collab: {may: [stage, set, confirm, pipeline]}",
                                              "collab: {may: [stage]}"))
    before = snapshot(c["a"])
    proc = cli("new", "m2", "--template", str(other), "--json", cwd=c["a"])
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 2 and error["code"] == "INVALID_VALUE", proc.stdout
    assert f"'mine' version 1 already has other content (commit {first[:10]} stored it as " in error["message"]
    assert error["details"]["commit"] == first and "version: '3'" in error["message"]
    assert snapshot(c["a"]) == before
    ok(c["a"], "new", "m3", "--template", str(mine))  # its own content again: taken, m1 keeps moving
    ok(c["a"], "stage", "m1", "plan", "in_progress")


def test_a_hand_commit_giving_a_stored_version_other_content_is_illegal(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    ok(c["a"], "new", "m1", "--template", str(evil(tmp_path / "mine.yaml", name="mine")))
    stored = c["a"] / "state/templates/mine.yaml"
    stored.write_text(stored.read_text().replace("collab: {may: [stage, set, confirm, pipeline]}",
                                                 "collab: {may: [stage, set, confirm, pipeline, new]}"))
    git(c["a"], "commit", "-qam", "mine: one action more, same version")
    sha = git(c["a"], "rev-parse", "HEAD")
    found = json.loads(cli("verify", "--json", cwd=c["a"]).stdout)["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in found] == [(sha, "illegal", "templates/mine.yaml")]
    assert "stores template 'mine' version 1 with other content" in found[0]["message"]


def test_a_run_made_before_runs_recorded_the_digest_verifies_on_the_content_it_was_made_with(
        tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    ok(c["a"], "new", "p1", "--template", "linear")
    state = c["a"] / "state/runs/p1/state.yaml"  # as statedir wrote it before runs recorded the digest
    state.write_text(re.sub(r"template_digest: '[^']*'\n", "", state.read_text()))
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit", "-a"], cwd=c["a"], check=True)
    ok(c["a"], "stage", "p1", "plan", "in_progress")
    assert "template_digest" not in state.read_text()  # a transition adds none
    verified = json.loads(cli("verify", "--json", cwd=c["a"]).stdout)
    assert verified["clean"], verified
    assert cli_in(c["a"], "validate").returncode == 0

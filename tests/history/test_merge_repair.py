"""doctor --fix re-merges a merge resolved by hand (issue 22, point 4): a clone without the
merge driver merged store files line by line, someone kept both sides and committed with
--no-verify; every other clone's sync was refused from then on. Real clones of one bare
remote, the real CLI, plain git for what a person does by hand."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from statedir.gitops import commit_message
from tests.support.sync import clean, cli_in, entries, git, network, ok, store_files
from tests.support.util import cli, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


def _keep_both_sides(clone: Path) -> str:
    """What a person does without the driver: `git pull`, a textual conflict, both sides' lines
    kept (the markers deleted), committed with --no-verify and pushed. Returns the merge's sha."""
    git(clone, "config", "--remove-section", "merge.statedir")  # a clone without the driver
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-edit"], cwd=clone, capture_output=True, text=True)
    assert pull.returncode != 0 and "CONFLICT (content)" in pull.stdout, pull.stdout + pull.stderr
    for rel in git(clone, "diff", "--name-only", "--diff-filter=U").splitlines():
        path = clone / rel
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(line for line in lines if not line.startswith(("<<<<<<< ", "=======", ">>>>>>> "))))
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "--no-verify", "--no-edit")
    git(clone, "push", "-q")
    return git(clone, "rev-parse", "HEAD")


def _hand_merged(tmp_path: Path) -> tuple[dict[str, Path], str]:
    """Clone a starts stage 1, clone b retitles the run; b merges by hand keeping both sides:
    state.yaml gets two `updated_at` keys, the log both entries in the wrong order."""
    c = network(tmp_path, ("a", "b", "c"))
    ok(c["a"], "stage", "r1", "1", "in_progress", "--reason", "A starts")
    ok(c["a"], "sync")
    time.sleep(1 - time.time() % 1)  # B's updated_at a second after A's: the two lines differ, and both are kept
    ok(c["b"], "set", "r1", "topic", "from B", "--reason", "B retitles")
    return c, _keep_both_sides(c["b"])


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_doctor_fix_re_merges_a_hand_merge_in_one_commit_and_every_clone_syncs_again(tmp_path: Path) -> None:
    c, merge = _hand_merged(tmp_path)
    validate = cli_in(c["b"], "validate")
    assert validate.returncode == 1 and "duplicate key" in validate.stdout
    found = json.loads(cli("verify", "--json", cwd=c["b"]).stdout)["findings"]
    assert {(f["commit"], f["kind"]) for f in found} == {(merge, "illegal_merge")}
    ok(c["c"], "stage", "r1", "1", "in_progress", "--reason", "C starts too")  # c has its own work to merge
    head = git(c["c"], "rev-parse", "HEAD")
    refused = cli("sync", "--json", cwd=c["c"])
    assert refused.returncode == 1 and json.loads(refused.stdout)["error"]["code"] == "MERGE_REFUSED"
    assert git(c["c"], "rev-parse", "HEAD") == head and git(c["c"], "status", "--porcelain") == ""

    report = cli("doctor", "--json", cwd=c["b"])
    hand = [f for f in json.loads(report.stdout)["findings"] if f["kind"] == "hand_merge"]
    assert report.returncode == 1 and len(hand) == 1 and hand[0]["commit"] == merge
    assert "re-merge its store files" in hand[0]["fix"]
    fixed = cli("doctor", "--fix", "--json", cwd=c["b"])
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "hand_merge" in {f["kind"] for f in json.loads(fixed.stdout)["repaired"]}
    # one new commit on top of the merge, naming it; history is not rewritten
    assert git(c["b"], "rev-parse", "HEAD~1") == merge
    message = git(c["b"], "log", "-1", "--format=%B")
    assert f"Statedir-Repairs-Merge: {merge}" in message and "Statedir-Action: doctor" in message
    # the log always (both sides' entries were kept as one); state.yaml where the hand kept two
    # `updated_at` lines (the two sides wrote it in different seconds): only files the hand got wrong
    log = f"state/runs/r1/history/transitions/{entries_day(c['b'])}.yaml"
    changed = set(git(c["b"], "diff", "--name-only", "HEAD~1", "HEAD").splitlines())
    assert log in changed and changed <= {log, "state/runs/r1/state.yaml"}, changed
    assert cli_in(c["b"], "validate").returncode == 0
    verified = json.loads(cli("verify", "--json", cwd=c["b"]).stdout)
    assert verified["clean"] and verified["findings"] == []
    repair = git(c["b"], "rev-parse", "HEAD")
    assert {(f["commit"], f["repaired_by"]) for f in verified["repaired"]} == {(merge, repair)}
    assert "repaired" in cli("verify", cwd=c["b"]).stdout
    ok(c["b"], "sync")
    for name in ("c", "a", "b"):
        ok(c[name], "sync")
    files = store_files(c["a"])
    for clone in c.values():
        assert store_files(clone) == files
        clean(clone)
        assert cli_in(clone, "doctor").returncode == 0 or clone == c["b"]
    reasons = sorted(e["reason"] for e in entries(c["a"], "r1") if e.get("reason"))
    assert reasons == ["A starts", "B retitles", "C starts too"]


def entries_day(clone: Path) -> str:
    return next((clone / "state/runs/r1/history/transitions").glob("*.yaml")).stem


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_hand_merge_whose_parents_conflict_is_named_and_nothing_changes(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "from A", "--reason", "A retitles")
    ok(c["a"], "sync")
    ok(c["b"], "set", "r1", "topic", "from B", "--reason", "B retitles")
    merge = _keep_both_sides(c["b"])
    assert cli_in(c["b"], "doctor", "--fix").returncode == 1  # registers the driver; the merge stays
    before = snapshot(c["b"])
    proc = cli("doctor", "--fix", "--json", cwd=c["b"])
    assert proc.returncode == 1
    hand = [f for f in json.loads(proc.stdout)["findings"] if f["kind"] == "hand_merge"]
    assert len(hand) == 1 and hand[0]["commit"] == merge
    assert hand[0]["fix"].startswith("none: doctor cannot re-merge it")
    assert "conflict on it" in hand[0]["fix"] and "nothing is changed" in hand[0]["fix"]
    assert snapshot(c["b"]) == before and git(c["b"], "rev-parse", "HEAD") == merge


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_a_forged_repair_commit_repairs_nothing(tmp_path: Path) -> None:
    """A commit that names the merge in the trailer but holds other content is illegal, and
    the merge stays a finding."""
    c, merge = _hand_merged(tmp_path)
    # the files as b had them before the merge: valid, but not the driver's merge of both sides
    git(c["b"], "checkout", f"{merge}^1", "--", "state/runs/r1")
    git(c["b"], "add", "-A")
    message = commit_message.message(f"doctor: re-merge {merge[:10]}", "-", "state_tracker", "doctor",
                                     trailers={"Statedir-Repairs-Merge": merge})
    git(c["b"], "commit", "-q", "--no-verify", "-m", message)
    assert cli_in(c["b"], "validate").returncode == 0  # valid YAML now, but not what the driver gives
    verified = json.loads(cli("verify", "--json", cwd=c["b"]).stdout)
    kinds = {(f["commit"], f["kind"]) for f in verified["findings"]}
    assert (merge, "illegal_merge") in kinds and (git(c["b"], "rev-parse", "HEAD"), "illegal") in kinds
    assert "repaired" not in verified


def _relaxed(clone: Path) -> bytes:
    """A `linear` version 2 with a role of the collaborator's, as the store would hold it."""
    from statedir.engine import template
    from statedir.files import yaml
    from statedir.store import layout

    text = template.shipped()["linear"].read_text().replace("version: '1'", "version: '2'")
    text = text.replace("roles:\n", "roles:\n  collab: {may: [stage, set, confirm]}\n", 1)
    return (yaml.header(layout.schema_ref("templates/linear.yaml")) + text.partition("\n")[2]).encode()


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_after_a_repair_later_commits_replay_on_the_repaired_state(tmp_path: Path) -> None:
    """Issue 30, point 6: a hand merge plants a relaxed template, a run is made on it and moved by
    a role only it has; `doctor --fix` repairs the merge, and verify still calls both illegal."""
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "from A", "--reason", "A retitles")
    ok(c["a"], "sync")
    ok(c["b"], "stage", "r1", "1", "in_progress", "--reason", "B starts")
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-commit"], cwd=c["b"], capture_output=True, text=True)
    assert pull.returncode == 0, pull.stdout + pull.stderr  # the driver merged it; the hand adds its own file
    (c["b"] / "state/templates").mkdir(exist_ok=True)
    (c["b"] / "state/templates/linear.yaml").write_bytes(_relaxed(c["b"]))
    git(c["b"], "add", "-A")
    git(c["b"], "commit", "-q", "--no-verify", "--no-edit")
    merge = git(c["b"], "rev-parse", "HEAD")
    made = ok(c["b"], "new", "p9", "--template", "linear")["commit"]  # legal only under the planted file
    moved = ok(c["b"], "stage", "p9", "plan", "in_progress", "--actor", "collab")["commit"]
    git(c["b"], "push", "-q")

    git(c["a"], "pull", "-q", "--ff-only")  # the victim takes it, and doctor repairs the merge
    fixed = cli("doctor", "--fix", "--json", cwd=c["a"])
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    repair = git(c["a"], "rev-parse", "HEAD")
    assert f"Statedir-Repairs-Merge: {merge}" in git(c["a"], "log", "-1", "--format=%B")
    assert not (c["a"] / "state/templates/linear.yaml").exists()
    verified = json.loads(cli("verify", "--json", cwd=c["a"]).stdout)
    assert {(f["commit"], f["repaired_by"]) for f in verified["repaired"]} == {(merge, repair)}
    assert not verified["clean"]
    assert {(f["commit"], f["kind"]) for f in verified["findings"]} == {(made, "illegal"), (moved, "illegal")}
    assert "planted" in next(f["message"] for f in verified["findings"] if f["commit"] == moved)
    assert cli("verify", cwd=c["a"]).returncode == 1

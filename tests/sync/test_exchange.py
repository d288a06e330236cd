"""Many machines, one store: a bare remote on local disk and real clones, synced in several
orders (and by plain `git pull` with the driver), through the real CLI."""
from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from statedir.files import yaml
from tests.support.sync import clean, entries, git, network, ok, stage_by_hand, store_files, topics_apart
from tests.support.util import cli, snapshot

# Slow: a network of clones of one remote, each test several CLI syncs (fetch, merge driver,
# validate, verify, push): 1-6 CPU-s a test.
pytestmark = pytest.mark.slow


def _reasons(clone: Path, run: str) -> Counter[str]:
    return Counter(e.get("reason") for e in entries(clone, run) if e.get("reason"))


def test_the_issue_case_two_transitions_on_one_run_keep_both_log_entries(tmp_path: Path) -> None:
    """Two branches each make one transition on the same run (the old `merge=union` breaks
    their log: tests/merge/test_rules.py); with the driver both entries are kept, each once, and validate and
    verify are clean."""
    c = network(tmp_path, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "Shared topic", "--reason", "from A")
    ok(c["b"], "set", "r1", "topic", "Shared topic", "--reason", "from B")
    # with the driver
    ok(c["a"], "sync")
    result = ok(c["b"], "sync")
    assert result["status"] == "merged" and result["pushed"]
    ok(c["a"], "sync")
    for clone in c.values():
        assert _reasons(clone, "r1") == Counter({"from A": 1, "from B": 1})
        clean(clone)
    assert store_files(c["a"]) == store_files(c["b"])


def test_three_clones_converge_in_several_orders(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b", "c"), runs=("r1", "r2", "r3"))
    ok(c["a"], "stage", "r1", "1", "in_progress", "--reason", "a1")
    ok(c["b"], "stage", "r2", "1", "in_progress", "--reason", "b1")
    ok(c["c"], "stage", "r3", "1", "in_progress", "--reason", "c1")
    ok(c["c"], "set", "r1", "language", "de", "--reason", "c2")  # the same run as a, other fields
    ok(c["b"], "sync")
    ok(c["c"], "sync")
    # a plain `git pull` merges with the registered driver too
    git(c["a"], "pull", "-q", "--no-rebase", "--no-edit")
    git(c["a"], "push", "-q")
    ok(c["b"], "set", "r3", "topic", "later", "--reason", "b2")
    ok(c["b"], "sync")
    for name in ("c", "a", "b"):
        ok(c[name], "sync")
    files = store_files(c["a"])
    for name, clone in c.items():
        assert store_files(clone) == files, name
        clean(clone)
    want = {"r1": {"a1": 1, "c2": 1}, "r2": {"b1": 1}, "r3": {"c1": 1, "b2": 1}}
    for run, reasons in want.items():
        assert _reasons(c["a"], run) == Counter(reasons), run
    state = yaml.to_plain(yaml.load(files["state/runs/r1/state.yaml"], "state.yaml"))
    assert state["language"] == "de" and state["pipeline_state"] == "running"


def test_an_incompatible_change_to_one_run_is_refused_and_loses_nothing(tmp_path: Path) -> None:
    c = topics_apart(tmp_path)
    (c["b"] / "notes.txt").write_text("my own uncommitted work\n")
    head = git(c["b"], "rev-parse", "HEAD")
    before = snapshot(c["b"], objects=False)
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED"
    [conflict] = error["details"]["conflicts"]
    assert conflict["run"] == "r1" and conflict["file"] == "runs/r1/state.yaml"
    assert [(f["field"], f["ours"], f["theirs"]) for f in conflict["fields"]] == [("topic", "topic B", "topic A")]
    after = snapshot(c["b"], objects=False)
    assert git(c["b"], "rev-parse", "HEAD") == head
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert {k for k in changed if not k.startswith(".git/")} == set()  # the work tree is as it was
    assert not (c["b"] / ".git" / "MERGE_HEAD").exists()
    human = cli("sync", cwd=c["b"])
    assert human.returncode == 1 and "conflict  run r1  runs/r1/state.yaml" in human.stdout
    assert "topic" in human.stdout and "MERGE_REFUSED" in human.stderr
    # a plain git pull shows the conflict in the file, both sides kept, and readers say what it is
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-edit"], cwd=c["b"], capture_output=True, text=True)
    assert pull.returncode != 0
    raw = (c["b"] / "state" / "runs" / "r1" / "state.yaml").read_text()
    assert "topic: topic A" in raw and "topic: topic B" in raw and "statedir refused" in raw
    shown = cli("show", "r1", "--json", cwd=c["b"])
    assert shown.returncode != 0 and json.loads(shown.stdout)["error"]["code"] == "UNRESOLVED_MERGE"
    assert "unresolved merge of runs/r1/state.yaml" in json.loads(shown.stdout)["error"]["message"]
    validate = cli("validate", "--json", cwd=c["b"])
    assert validate.returncode == 1 and "unresolved merge of runs/r1/state.yaml" in validate.stdout
    assert "git merge --abort" in validate.stdout
    doctor = cli("doctor", "--json", cwd=c["b"])
    kinds = {f["kind"] for f in json.loads(doctor.stdout)["findings"]}
    assert doctor.returncode == 1 and "unresolved_merge" in kinds


def test_a_hand_resolved_merge_that_leaves_the_run_inconsistent_is_found(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    # the same field changed on both sides: refused (two identical starts within one second
    # would merge, rightly: the timestamps must differ for `started_at` to conflict)
    ok(c["a"], "stage", "r1", "1", "in_progress", "--reason", "A starts")
    ok(c["a"], "sync")
    ok(c["b"], "sync")
    ok(c["a"], "set", "r1", "topic", "from A", "--reason", "A retitles")
    ok(c["a"], "sync")
    ok(c["b"], "set", "r1", "topic", "from B", "--reason", "B retitles")
    assert cli("sync", cwd=c["b"]).returncode == 1
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-edit"], cwd=c["b"], capture_output=True, text=True)
    assert pull.returncode != 0
    # resolved by hand, badly: their files, and the run said to await a checkpoint nobody opened
    git(c["b"], "checkout", "--theirs", "--", "state/runs/r1")
    state = c["b"] / "state" / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("pipeline_state: running", "pipeline_state: awaiting_confirmation"))
    git(c["b"], "add", "-A")
    git(c["b"], "commit", "-q", "--no-edit")
    found = cli("validate", "--json", cwd=c["b"])
    assert found.returncode == 1 and "no checkpoint is open" in found.stdout
    doctor = cli("doctor", "--json", cwd=c["b"])
    assert doctor.returncode == 1
    assert any("no checkpoint is open" in f["message"] for f in json.loads(doctor.stdout)["findings"])
    verify = cli("verify", "--json", cwd=c["b"])
    assert verify.returncode == 1
    assert {f["kind"] for f in json.loads(verify.stdout)["findings"]} == {"illegal_merge"}


def test_sync_with_nothing_to_do_and_without_a_remote(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    result = ok(c["a"], "sync")
    assert result["status"] == "up_to_date" and not result["pushed"]
    git(c["a"], "remote", "remove", "origin")
    before = snapshot(c["a"])
    proc = cli("sync", "--json", cwd=c["a"])
    assert proc.returncode == 3 and "no git remote 'origin'" in json.loads(proc.stdout)["error"]["message"]
    assert snapshot(c["a"]) == before


def test_a_fresh_clone_warns_until_doctor_registers_the_driver(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "remote.git"), str(fresh)], check=True, capture_output=True)
    runs = cli("runs", cwd=fresh)
    assert runs.returncode == 0 and runs.stderr.count("merge driver") == 1
    validate = cli("validate", cwd=fresh)
    assert validate.returncode == 0 and validate.stderr.count("merge driver") == 1
    write = cli("set", "r1", "topic", "x", "--reason", "r", "--json", cwd=fresh)
    assert write.returncode == 0 and write.stderr.count("merge driver") == 1
    assert any("merge driver" in w for w in json.loads(write.stdout)["warnings"])
    doctor = cli("doctor", "--json", cwd=fresh)
    assert doctor.returncode == 1 and "merge_driver" in {f["kind"] for f in json.loads(doctor.stdout)["findings"]}
    assert cli("doctor", "--fix", cwd=fresh).returncode == 0
    assert "merge driver" not in cli("runs", cwd=fresh).stderr
    # a stale registration (its interpreter gone) is reported and rewritten
    git(fresh, "config", "merge.statedir.driver", "/nonexistent/python -m statedir merge-driver %O %A %B %P")
    stale = cli("doctor", "--json", cwd=fresh)
    assert stale.returncode == 1 and "merge_driver" in {f["kind"] for f in json.loads(stale.stdout)["findings"]}
    assert cli("doctor", "--fix", cwd=fresh).returncode == 0
    assert "/nonexistent" not in git(fresh, "config", "merge.statedir.driver")
    assert c


def test_sync_merges_again_when_the_remote_moves_before_its_push(tmp_path: Path) -> None:
    """A pre-push hook in b makes c push first, once: b's push is rejected, and sync fetches,
    merges and pushes again."""
    c = network(tmp_path, ("a", "b", "c"), runs=("r1", "r2"))
    ok(c["a"], "set", "r1", "topic", "from a", "--reason", "a1")
    ok(c["a"], "sync")
    ok(c["c"], "set", "r2", "topic", "from c", "--reason", "c1")
    ok(c["b"], "set", "r1", "language", "de", "--reason", "b1")
    hook = c["b"] / ".git" / "hooks" / "pre-push"
    marker = tmp_path / "moved"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\nif [ ! -e '{marker}' ]; then touch '{marker}'; "
                    f"cd '{c['c']}' && git pull -q --no-rebase --no-edit && git push -q; fi\nexit 0\n")
    hook.chmod(0o755)
    result = ok(c["b"], "sync")
    assert marker.exists() and result["attempts"] == 2 and result["pushed"]
    for name in ("a", "c"):
        ok(c[name], "sync")
    files = store_files(c["a"])
    for name, clone in c.items():
        assert store_files(clone) == files, name
        clean(clone)
    assert _reasons(c["b"], "r1") == Counter({"a1": 1, "b1": 1}) and _reasons(c["b"], "r2") == Counter({"c1": 1})


def test_sync_never_touches_the_users_own_changes(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"), runs=("r1", "r2"))
    (c["a"] / "notes.txt").write_text("shared notes\n")
    git(c["a"], "add", "notes.txt")
    git(c["a"], "commit", "-q", "-m", "notes")
    ok(c["a"], "set", "r1", "topic", "from a", "--reason", "a1")
    ok(c["a"], "sync")
    ok(c["b"], "set", "r2", "topic", "from b", "--reason", "b1")
    (c["b"] / "notes.txt").write_text("my draft, not committed\n")  # the merge would bring notes.txt in
    head = git(c["b"], "rev-parse", "HEAD")
    before = snapshot(c["b"], objects=False)
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 3, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "UNCOMMITTED_EDIT" and "Commit or stash those changes first" in error["message"]
    after = snapshot(c["b"], objects=False)
    assert git(c["b"], "rev-parse", "HEAD") == head
    assert {k for k in set(before) | set(after) if before.get(k) != after.get(k) and not k.startswith(".git/")} == set()
    # a store file edited by hand: sync refuses before fetching anything
    state = c["b"] / "state" / "runs" / "r2" / "state.yaml"
    state.write_text(state.read_text() + "# a note\n")
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 3 and "store files differ from HEAD" in json.loads(proc.stdout)["error"]["message"]
    assert (c["b"] / "notes.txt").read_text() == "my draft, not committed\n"


def test_sync_merges_with_the_driver_even_before_the_clone_registers_it(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "remote.git"), str(fresh)], check=True, capture_output=True)
    ok(c["a"], "set", "r1", "topic", "Shared", "--reason", "from A")
    ok(c["a"], "sync")
    ok(fresh, "set", "r1", "language", "de", "--reason", "from B")
    proc = cli("sync", "--json", cwd=fresh)
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "merged", proc.stdout + proc.stderr
    assert "doctor --fix" in proc.stderr  # still told to register it for plain git merges
    assert _reasons(fresh, "r1") == Counter({"from A": 1, "from B": 1})
    clean(fresh)


def test_a_merge_whose_result_is_not_a_legal_store_is_refused(tmp_path: Path) -> None:
    """Each file merges cleanly, but the run they make is illegal (here: the other side's
    commit put stage 2 in progress by hand while the run stands at stage 1): sync refuses,
    says why, and leaves the branch as it was."""
    c = network(tmp_path, ("a", "b"))
    stage_by_hand(c["a"], "r1", "2", status="in_progress")
    git(c["a"], "commit", "-q", "-am", "by hand")
    git(c["a"], "push", "-q")
    ok(c["b"], "set", "r1", "topic", "mine", "--reason", "b1")
    head = git(c["b"], "rev-parse", "HEAD")
    before = snapshot(c["b"], objects=False)
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED" and "not a legal store" in error["message"]
    assert any("stage 2 is in_progress" in p for p in error["details"]["problems"])
    assert git(c["b"], "rev-parse", "HEAD") == head and not (c["b"] / ".git" / "MERGE_HEAD").exists()
    after = snapshot(c["b"], objects=False)
    assert {k for k in set(before) | set(after) if before.get(k) != after.get(k) and not k.startswith(".git/")} == set()
    human = cli("sync", cwd=c["b"])
    assert human.returncode == 1 and "illegal   " in human.stdout


def test_history_that_does_not_verify_is_refused_and_the_branch_restored(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"), runs=("r1", "r2"))
    state = c["a"] / "state" / "runs" / "r1" / "state.yaml"
    state.write_text(state.read_text().replace("topic: topic of r1", "topic: edited by hand"))
    git(c["a"], "commit", "-q", "-am", "a hand edit: valid, but no transition")
    git(c["a"], "push", "-q")
    ok(c["b"], "set", "r2", "topic", "mine", "--reason", "b1")
    (c["b"] / "notes.txt").write_text("untracked, mine\n")
    head = git(c["b"], "rev-parse", "HEAD")
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED" and "does not verify" in error["message"]
    assert {f["kind"] for f in error["details"]["findings"]} == {"hand_edit"}
    assert git(c["b"], "rev-parse", "HEAD") == head and git(c["b"], "status", "--porcelain") == "?? notes.txt"
    assert "topic: topic of r1" in (c["b"] / "state" / "runs" / "r1" / "state.yaml").read_text()


def test_doctor_rewrites_an_old_gitattributes_in_one_verified_commit(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    attributes = c["a"] / "state" / ".gitattributes"
    attributes.write_text("*.yaml text eol=lf\nruns/*/history/*.yaml merge=union\n")
    git(c["a"], "commit", "-q", "-am", "a store from before the merge driver")
    head = git(c["a"], "rev-parse", "HEAD")
    doctor = cli("doctor", "--json", cwd=c["a"])
    assert doctor.returncode == 1
    assert "merge_attributes" in {f["kind"] for f in json.loads(doctor.stdout)["findings"]}
    assert cli("doctor", "--fix", cwd=c["a"]).returncode == 0
    assert "merge=statedir" in attributes.read_text()
    assert git(c["a"], "rev-list", "--count", f"{head}..HEAD") == "1"
    proc = cli("verify", "--since", head, "--json", cwd=c["a"])
    assert proc.returncode == 0 and json.loads(proc.stdout)["clean"], proc.stdout


def test_after_a_renumbering_every_record_names_the_label_its_content_has(tmp_path: Path) -> None:
    """Both clones register review_reports; the merge moves b's to review_v2. log, the run's
    history (show, show --at) and versions then credit each label to the commit that wrote its
    content, and name review_v2 where b's entry said review_v1."""
    c = network(tmp_path, ("a", "b"))
    (c["a"] / "ra.md").write_text("A's reviews\n")
    (c["b"] / "rb.md").write_text("B's reviews\n")
    mine = ok(c["a"], "material", "r1", "review_reports", "--file", "ra.md")["commit"]
    ok(c["a"], "sync")
    theirs = ok(c["b"], "material", "r1", "review_reports", "--file", "rb.md")["commit"]
    assert ok(c["b"], "sync")["status"] == "merged"
    ok(c["a"], "sync")
    moved = "material review_reports -> review_v2 (renumbered from review_v1 by a merge)"
    for clone in c.values():
        labels = {r["version_label"]: r["commit"] for r in ok(clone, "versions", "r1", "review_reports")}  # type: ignore[union-attr]
        assert labels == {"review_v1": mine, "review_v2": theirs}
        logged = {e["commit"]: e["summary"] for e in ok(clone, "log", "r1")}  # type: ignore[union-attr]
        assert logged[mine] == "material review_reports -> review_v1" and logged[theirs] == moved
        for document in (ok(clone, "show", "r1"), ok(clone, "show", "r1", "--at", "HEAD")):
            summaries = [e["summary"] for e in document["history"]["transitions"]]
            assert "material review_reports -> review_v1" in summaries and moved in summaries, summaries
        assert "(not committed)" not in cli("versions", "r1", "review_reports", cwd=clone).stdout
        clean(clone)
    before = ok(c["b"], "show", "r1", "--at", theirs)  # before the merge, on b: it was review_v1 there
    assert before["history"]["transitions"][-1]["summary"] == "material review_reports -> review_v1"

"""doctor: what a crash, a clone or a hand edit left behind, one line each, repaired by --fix."""
from __future__ import annotations

import json
from pathlib import Path

from statedir import api
from tests.support.history import drive, git
from tests.support.util import cli, cli_json


def test_a_clean_store_has_nothing_to_repair(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 3)
    assert cli_json("doctor", cwd=repo) == (0, {"findings": [], "repaired": [], "backup": None})
    assert sd.doctor() == {"findings": [], "repaired": [], "backup": None}
    assert "nothing to repair" in cli("doctor", cwd=repo).stdout


def test_a_writer_killed_mid_transition(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 2)
    head = git(repo, "rev-parse", "HEAD")
    killed = cli("stage", "p1", "1", "completed", cwd=repo, env={"STATEDIR_FAULT": "between_files"})
    assert killed.returncode == -9
    assert (repo / "state/.statedir.txn").exists() and git(repo, "status", "--porcelain", "--", "state")
    code, out = cli_json("doctor", cwd=repo)
    assert code == 1 and [f["kind"] for f in out["findings"]] == ["journal"]
    assert out["findings"][0]["fix"] == "roll its files back to HEAD and remove the journal"
    code, out = cli_json("doctor", "--fix", cwd=repo)
    assert code == 0 and out["findings"] == [] and [f["kind"] for f in out["repaired"]] == ["journal"]
    assert not (repo / "state/.statedir.txn").exists()
    assert git(repo, "status", "--porcelain", "--", "state") == "" and git(repo, "rev-parse", "HEAD") == head


def test_hand_edits_are_saved_then_restored(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 2)
    state = repo / "state/runs/p1/state.yaml"
    committed = state.read_text()
    state.write_text(committed.replace("topic: AI and QA", "topic: by hand"))
    (repo / "state/runs/p1/stages/notes.yaml").write_text("mine: true\n")
    (repo / "state/runs/p1/stages/.1.yaml.123.tmp").write_text("half")
    text = cli("doctor", cwd=repo)
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert any(line.startswith("uncommitted  runs/p1/state.yaml: runs/p1/state.yaml differs from HEAD")
               for line in lines)
    assert any("runs/p1/stages/notes.yaml is not committed" in line for line in lines)
    assert any(line.startswith("temp_file    runs/p1/stages/.1.yaml.123.tmp") and "(--fix: delete it)" in line
               for line in lines)
    code, out = cli_json("doctor", "--fix", cwd=repo)
    assert code == 0 and out["findings"] == []
    assert state.read_text() == committed and not (repo / "state/runs/p1/stages/notes.yaml").exists()
    backup = Path(out["backup"])
    assert (backup / "runs/p1/state.yaml").read_text().count("topic: by hand") == 1
    assert (backup / "runs/p1/stages/notes.yaml").read_text() == "mine: true\n"
    assert git(repo, "status", "--porcelain", "--", "state") == ""


def test_two_fixes_in_one_second_keep_both_saved_hand_edits(sd: api.StateDir, repo: Path) -> None:
    """Backup folders are named by the second: a doctor that finds its name taken (another
    doctor's, the same second) makes `<time>-2`, never writing into the other's folder."""
    import datetime

    drive(sd, repo / "draft.md", 2)
    state = repo / "state/runs/p1/state.yaml"
    committed = state.read_text()
    root = repo / ".git/statedir/doctor"
    now = datetime.datetime.now(datetime.timezone.utc)
    taken = [(now + datetime.timedelta(seconds=s)).strftime("%Y%m%dT%H%M%SZ") for s in range(60)]
    for stamp in taken:  # an earlier doctor's backup in every second this test may run in
        (root / stamp / "runs/p1").mkdir(parents=True)
        (root / stamp / "runs/p1/state.yaml").write_text("the first saved hand edit\n")
    saved = []
    for edit in ("topic: second edit", "topic: third edit"):
        state.write_text(committed.replace("topic: AI and QA", edit))
        code, out = cli_json("doctor", "--fix", cwd=repo)
        assert code == 0 and state.read_text() == committed, out
        backup = Path(out["backup"])
        assert backup.parent == root and backup.name.rsplit("-", 1)[0] in taken and backup.name not in taken
        saved.append(backup)
    assert saved[0] != saved[1]
    pairs = zip(saved, ("second", "third"), strict=True)
    assert [(b / "runs/p1/state.yaml").read_text().count(e) for b, e in pairs] == [1, 1]
    assert all((root / s / "runs/p1/state.yaml").read_text() == "the first saved hand edit\n" for s in taken)


def test_a_missing_schema_copy_is_restored_in_a_commit_that_verifies(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 2)
    schema = repo / "state/.schemas/stage.schema.json"
    schema.unlink()
    git(repo, "commit", "-q", "-a", "-m", "drop a schema")
    code, out = cli_json("doctor", cwd=repo)
    assert code == 1 and [(f["kind"], f["file"]) for f in out["findings"]] == [
        ("schema_copy", ".schemas/stage.schema.json")]
    assert cli_json("doctor", "--fix", cwd=repo)[0] == 0
    assert schema.is_file()
    assert git(repo, "log", "-1", "--format=%s%n%(trailers:key=Statedir-Action,valueonly)").split("\n")[:2] == [
        "doctor: restore 1 schema copy", "doctor"]
    findings = sd.verify()["findings"]
    assert [(f["kind"], f["file"]) for f in findings] == [("hand_edit", ".schemas/stage.schema.json")]  # the drop


def test_a_parse_cache_that_does_not_match(sd: api.StateDir, repo: Path) -> None:
    drive(sd, repo / "draft.md", 2)
    sd.show("p1")  # the cache holds every file now
    from statedir.files import schema
    from statedir.files.parse_cache import ParseCache

    raw = (repo / "state/runs/p1/state.yaml").read_bytes()
    cache = ParseCache(sd.store.cache_dir / "parsed")
    entry = Path(cache._path(raw))  # noqa: SLF001 - the test corrupts the entry for this file
    kind, canonical, plain = json.loads(entry.read_bytes())
    assert kind == schema.cache_kind("run-state")
    entry.write_text(json.dumps([kind, canonical, {**plain, "topic": "stale"}]))
    code, out = cli_json("doctor", cwd=repo)
    assert code == 1 and [(f["kind"], f["file"]) for f in out["findings"]] == [("parse_cache", "runs/p1/state.yaml")]
    assert cli_json("doctor", "--fix", cwd=repo)[0] == 0
    assert cli_json("get", "p1", "topic", cwd=repo) == (0, "AI and QA")


def test_what_has_no_repair_stays_a_finding_and_is_not_called_fixed(sd: api.StateDir, repo: Path) -> None:
    """An invalid committed file has no automatic repair: --fix lists it once, as left, never as
    fixed; signers.yaml, which every transition reads, says how to restore it by hand."""
    drive(sd, repo / "draft.md", 1)
    signers = repo / "state" / "signers.yaml"
    signers.write_text("# yaml-language-server: $schema=.schemas/signers.schema.json\nsigners: [\n")
    git(repo, "add", "state/signers.yaml")
    git(repo, "commit", "-q", "-m", "a broken signers.yaml")
    code, out = cli_json("doctor", "--fix", cwd=repo)
    assert code == 1 and out["repaired"] == []
    assert [(f["kind"], f["file"]) for f in out["findings"]] == [("invalid", "signers.yaml")]
    assert "git checkout REV -- state/signers.yaml" in out["findings"][0]["fix"]
    text = cli("doctor", "--fix", cwd=repo).stdout
    assert "fixed" not in text and text.count("signers.yaml:") == 1

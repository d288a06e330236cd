"""The bus through the Python API in real git repositories: commits, isolation of sessions,
the opt-in scratch cleanup, evidence checks, validation."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.bus import Bus, EvidenceMissing, UnknownSession
from statedir.engine import validate
from statedir.errors import CorruptStore, InvalidValue, StatedirError, UncommittedEdit
from tests.support.util import snapshot

S = "2026-06-30-member-blog-gating"
OTHER = "2026-06-29-earlier-run"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def commits(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%H").split()


def test_every_change_is_one_commit_of_the_session_file(repo: Path, sd: api.StateDir) -> None:
    bus = sd.bus(S)
    start = len(commits(repo))
    results = [bus.init(actor="orchestrator"), bus.set("prd_document", "docs/prd/x.md", actor="pm-agent"),
               bus.append("phases.0-requirements.evidence", ".ai_log/a.md", actor="pm-agent"),
               bus.set("phases.0-requirements.status", "done", actor="pm-agent"), bus.clear(actor="orchestrator")]
    assert len(commits(repo)) == start + 5
    for result, action, actor in zip(results, ["init", "set", "append", "set", "clear"],
                                     ["orchestrator", "pm-agent", "pm-agent", "pm-agent", "orchestrator"], strict=True):
        sha = result["commit"]
        assert result["changed"] and result["session"] == result["run_id"] == S
        body = git(repo, "show", "-s", "--format=%B%an", sha)
        assert f"Statedir-Run: {S}\nStatedir-Actor: {actor}\nStatedir-Action: bus-{action}\n" in body
        assert body.endswith(actor + "\n")
        touched = git(repo, "show", "--format=", "--name-only", sha).split()
        assert touched == [f"state/bus/{S}.yaml"], touched
    assert not (sd.store.root / "bus" / f"{S}.yaml").exists()
    # history keeps the cleared session
    assert "prd_document: docs/prd/x.md" in git(repo, "show", f"{results[3]['commit']}:state/bus/{S}.yaml")
    assert [e["action"] for e in sd.log()][:5] == ["bus-clear", "bus-set", "bus-append", "bus-set", "bus-init"]


def test_a_change_that_changes_nothing_makes_no_commit(repo: Path, sd: api.StateDir) -> None:
    bus = sd.bus(S)
    bus.init()
    bus.set("k", "v")
    head = commits(repo)
    assert bus.set("k", "v")["commit"] is None
    assert bus.init()["changed"] is True  # init starts fresh: k goes
    assert bus.init()["commit"] is None
    assert Bus(sd.store, "2026-01-01-none").clear()["commit"] is None
    assert len(commits(repo)) == len(head) + 1


def test_init_touches_no_other_session_and_no_scratch_by_default(repo: Path, sd: api.StateDir) -> None:
    sd.bus(OTHER).set("kept", "yes")
    scratch = repo / ".ai_log"
    scratch.mkdir()
    (scratch / "evidence.md").write_text("x")
    other_file = sd.store.root / "bus" / f"{OTHER}.yaml"
    before = other_file.read_bytes()
    sd.bus(S).init()
    assert other_file.read_bytes() == before and (scratch / "evidence.md").exists()
    assert sd.bus(OTHER).get("kept") == "yes"


def test_init_clean_empties_the_scratch_folder_keeping_gitkeep(repo: Path, sd: api.StateDir) -> None:
    scratch = repo / ".ai_log"
    (scratch / "sub").mkdir(parents=True)
    (repo / ".gitignore").write_text("/.ai_log/*\n!/.ai_log/.gitkeep\n")
    (scratch / ".gitkeep").write_text("")
    git(repo, "add", ".gitignore", ".ai_log/.gitkeep")
    git(repo, "commit", "-qm", "scratch folder")
    (scratch / "old.md").write_text("stale")
    (scratch / "sub" / "deep.log").write_text("stale")
    outside = repo / "precious.txt"
    outside.write_text("keep me")
    (scratch / "link").symlink_to(outside)
    result = sd.bus(S).init(clean=scratch)
    assert sorted(result["cleaned"]) == ["link", "old.md", "sub"]
    assert sorted(p.name for p in scratch.iterdir()) == [".gitkeep"]
    assert outside.read_text() == "keep me"  # a link is removed, never followed
    missing = repo / "fresh-scratch"
    assert sd.bus(S).init(clean=missing)["cleaned"] == [] and missing.is_dir()


@pytest.mark.parametrize("where", ["outside", "top", "git", "store", "inside-store", "tracked", "file", "symlink"])
def test_init_clean_is_refused_where_it_could_destroy_anything(repo: Path, sd: api.StateDir, tmp_path: Path,
                                                               where: str) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "report.md").write_text("committed work")
    git(repo, "add", "docs")
    git(repo, "commit", "-qm", "docs")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f").write_text("x")
    (repo / "afile").write_text("x")
    (repo / "link").symlink_to(repo / "docs")
    target = {"outside": tmp_path / "elsewhere", "top": repo, "git": repo / ".git", "store": sd.store.root,
              "inside-store": sd.store.root / "bus", "tracked": repo / "docs", "file": repo / "afile",
              "symlink": repo / "link"}[where]
    before = snapshot(repo)
    outside_before = snapshot(tmp_path / "elsewhere")
    with pytest.raises(InvalidValue) as caught:
        sd.bus(S).init(clean=target)
    assert caught.value.exit_code == 2
    assert snapshot(repo) == before and snapshot(tmp_path / "elsewhere") == outside_before


def test_append_check_path_wants_existing_evidence_inside_the_repository(repo: Path, sd: api.StateDir,
                                                                         tmp_path: Path) -> None:
    bus = sd.bus(S)
    bus.init()
    (repo / ".ai_log").mkdir()
    (repo / ".ai_log" / "phase-1.md").write_text("evidence")
    (tmp_path / "outside.md").write_text("x")
    (repo / ".ai_log" / "escape").symlink_to(tmp_path / "outside.md")
    before = snapshot(repo)
    for bad in [".ai_log/missing.md", str(tmp_path / "outside.md"), "../outside.md", ".ai_log/escape"]:
        with pytest.raises(EvidenceMissing) as caught:
            bus.append("phases.1-design.evidence", bad, check_path=True)
        assert caught.value.exit_code == 1
    assert snapshot(repo) == before
    bus.append("phases.1-design.evidence", ".ai_log/phase-1.md", check_path=True)
    bus.append("phases.1-design.evidence", str(repo / ".ai_log" / "phase-1.md"), check_path=True)
    bus.append("phases.1-design.evidence", ".ai_log/not-yet.md")  # unchecked unless asked
    assert bus.get("phases.1-design.evidence") == [".ai_log/phase-1.md", str(repo / ".ai_log" / "phase-1.md"),
                                                   ".ai_log/not-yet.md"]


def test_get_a_missing_session_or_field(sd: api.StateDir) -> None:
    with pytest.raises(UnknownSession) as caught:
        sd.bus(S).get()
    assert caught.value.exit_code == 1
    sd.bus(S).init()
    assert sd.bus(S).get("nope") is None and sd.bus(S).get("phases.x.status") is None
    assert sd.bus(S).get() == {"session": S, "phases": {}}


def test_refusals_change_nothing(repo: Path, sd: api.StateDir) -> None:
    bus = sd.bus(S)
    bus.set("phases.1-design.status", "done")
    bus.set("k", "v")
    before = snapshot(repo)
    for attempt in (lambda: bus.set("phases.1-design.status", "todo"), lambda: bus.append("k", "x"),
                    lambda: bus.set("phases.1-design.agent.name", "x"), lambda: bus.set("session", "x"),
                    lambda: bus.set("a..b", "x"), lambda: bus.set("k", "x" * (2 << 20)),
                    lambda: bus.set("k", "nul\x00"), lambda: bus.set("k", "\udcff"),
                    lambda: bus.set("k", "v", actor="evil\nStatedir-Run: other")):
        with pytest.raises(StatedirError) as caught:
            attempt()
        assert caught.value.exit_code in (1, 2), caught.value
        assert snapshot(repo) == before


def test_store_files_validate_and_a_hand_broken_session_is_reported(repo: Path, sd: api.StateDir) -> None:
    bus = sd.bus(S)
    bus.set("phases.1-design.status", "in_progress")
    bus.append("phases.1-design.evidence", ".ai_log/x.md")
    assert validate.store(sd.store.root) == []
    path = sd.store.root / "bus" / f"{S}.yaml"
    path.write_text(path.read_text().replace("in_progress", "finished"))
    problems = validate.store(sd.store.root)
    assert [(p.file, p.path) for p in problems] == [(f"bus/{S}.yaml", "$.phases['1-design'].status")]
    with pytest.raises(CorruptStore):
        bus.get()
    with pytest.raises(UncommittedEdit):  # an uncommitted hand edit is never discarded or committed unasked
        bus.clear()
    git(repo, "checkout", "HEAD", "--", str(path))
    assert bus.clear()["changed"]
    assert bus.init()["changed"] and bus.get() == {"session": S, "phases": {}}


def test_a_store_made_before_the_bus_gains_the_schema_copy(repo: Path, sd: api.StateDir) -> None:
    copy = sd.store.root / ".schemas" / "bus-session.schema.json"
    copy.unlink()
    git(repo, "commit", "-qam", "an older store")
    sha = sd.bus(S).init()["commit"]
    assert sorted(git(repo, "show", "--format=", "--name-only", sha).split()) == [
        "state/.schemas/bus-session.schema.json", f"state/bus/{S}.yaml"]
    assert copy.is_file()


def test_a_hand_edited_session_is_read_and_rewritten_in_statedirs_form(repo: Path, sd: api.StateDir) -> None:
    """A session edited by hand in YAML (flow style, comments) is read by ruamel and rewritten
    in statedir's form on the next change."""
    path = sd.store.root / "bus" / f"{S}.yaml"
    path.parent.mkdir()
    path.write_text(f"# yaml-language-server: $schema=../.schemas/bus-session.schema.json\n"
                    f"session: '{S}'  # the label\nphases: {{}}\nlist: [a, b]\n")
    git(repo, "add", "state/bus")
    git(repo, "commit", "-qm", "a session written by hand")
    bus = sd.bus(S)
    assert bus.get("list") == ["a", "b"]
    bus.append("list", "c")
    assert bus.get() == {"session": S, "phases": {}, "list": ["a", "b", "c"]}


def test_the_readme_python_example_runs(repo: Path, sd: api.StateDir) -> None:
    import re

    from tests.support.docs_text import page

    section = page("bus")
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    exec(compile(code, "docs/bus.md", "exec"), {})  # cwd is the repository holding ./state
    assert sd.bus(S).get("phases.1-design") == {"evidence": [".ai_log/phase-1-design.md"], "status": "done"}

"""verify replays handoff-bus commits with the bus's own rules: every verb the CLI has, used
legally, verifies clean; a commit with bus trailers that the CLI would refuse is a finding."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.bus.session import encode
from statedir.errors import StatedirError
from tests.support.history import forge

S = "2026-06-30-member-blog"
REL = f"bus/{S}.yaml"


@pytest.fixture
def used(sd: api.StateDir) -> api.StateDir:
    """A session through every verb: a phase done, an evidence list, nested outputs, a list replaced."""
    bus = sd.bus(S)
    bus.init()
    bus.set("user_request", "- fix the login bug")
    bus.set("phases.0-requirements.agent", "pm-agent")
    bus.set("phases.0-requirements.status", "in_progress")
    bus.append("phases.0-requirements.evidence", ".ai_log/a.md", actor="pm-agent")
    bus.append("phases.0-requirements.evidence", ".ai_log/b.md", actor="pm-agent")
    bus.set("phases.0-requirements.outputs.prd.path", "docs/prd.md", actor="pm-agent")
    bus.set("phases.0-requirements.status", "done", actor="pm-agent")
    bus.append("notes", "one")
    bus.set("notes", "a list replaced by a string, as `set` does")
    sd.bus("2026-06-30-other").set("k", "v")
    sd.bus("2026-06-30-other").clear()
    bus.init()  # started afresh: statuses and lists go, legally
    bus.set("phases.0-requirements.status", "todo")
    return sd


def session(**fields: Any) -> bytes:
    return encode(S, {"session": S, **fields})


def test_every_verb_used_legally_verifies_clean(used: api.StateDir) -> None:
    assert used.verify() == {"clean": True, "checked": 15, "findings": []}


@pytest.mark.parametrize("verb, data, says", [
    ("set", {"phases": {"0-requirements": {"status": "in_progress"}}}, "moves forward only"),
    ("set", {"phases": {"0-requirements": {"status": "todo"}}, "user_request": "x"}, "changes one field"),
    ("append", {"phases": {"0-requirements": {"status": "done", "evidence": ["only.md"]}}}, "different content"),
    ("set", {"phases": {"0-requirements": {"status": "done"}}, "session_dir": ["a", "b"]}, "strings"),
    ("frobnicate", {"phases": {"0-requirements": {"status": "todo"}}}, "no verb 'frobnicate'"),
    ("clear", {"phases": {"0-requirements": {"status": "done"}}, "k": "v"}, "different content"),
])
def test_a_commit_the_bus_would_refuse_is_illegal(sd: api.StateDir, repo: Path, verb: str, data: dict[str, Any],
                                                  says: str) -> None:
    bus = sd.bus(S)
    bus.append("phases.0-requirements.evidence", "a.md")
    bus.append("phases.0-requirements.evidence", "b.md")
    bus.set("phases.0-requirements.status", "done")
    data = copy.deepcopy(data)
    data["phases"]["0-requirements"].setdefault("evidence", ["a.md", "b.md"])
    sha = forge(repo, {REL: session(**data)}, action=f"bus-{verb}", run=S)
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "illegal", REL)], findings
    assert says in findings[0]["message"], findings[0]["message"]


def test_a_bus_commit_writes_its_own_session_only(sd: api.StateDir, repo: Path) -> None:
    sd.bus(S).set("k", "v")
    other = "bus/2026-06-30-other.yaml"
    sha = forge(repo, {other: encode("2026-06-30-other", {"session": "2026-06-30-other", "phases": {}, "k": "v"})},
                action="bus-set", run=S)
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "illegal", other)]
    assert f"writes {REL} only" in findings[0]["message"]


def test_a_file_the_bus_never_writes_is_reported(sd: api.StateDir, repo: Path) -> None:
    sd.bus(S).set("k", "v")
    sha = forge(repo, {"bus/.gitattributes": b"*.yaml merge=union\n", "bus/notes.txt": b"hi\n"},
                action="bus-set", run=S)
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [
        (sha, "illegal", "bus/.gitattributes"), (sha, "illegal", "bus/notes.txt")]
    assert "statedir never writes" in findings[0]["message"] and "merged" in findings[0]["message"]
    assert "not a YAML file" in findings[1]["message"]


@pytest.mark.parametrize("old, new, append, expected", [
    ({"phases": {}}, {"phases": {}, "a": "x"}, False, ("a", "x")),
    ({"phases": {}}, {"phases": {"p": {"status": "todo"}}}, False, ("phases.p.status", "todo")),
    ({"phases": {}, "l": ["a"]}, {"phases": {}, "l": ["a", "b"]}, True, ("l", "b")),
    ({"phases": {}}, {"phases": {}, "o": {"l": ["a"]}}, True, ("o.l", "a")),
    ({"phases": {}, "o": "s"}, {"phases": {}, "o": {"k": "v"}}, False, ("o.k", "v")),  # decide refuses it
])
def test_the_one_changed_field_is_found(old: dict[str, Any], new: dict[str, Any], append: bool,
                                        expected: tuple[str, str]) -> None:
    from statedir.bus.replay import changed_field

    assert changed_field(old, new, append=append) == expected


@pytest.mark.parametrize("old, new", [({"phases": {}}, {"phases": {}}), ({"phases": {}, "a": "x"}, {"phases": {}}),
                                      ({"phases": {}}, {"phases": {}, "a": "x", "b": "y"})])
def test_no_single_field_is_refused(old: dict[str, Any], new: dict[str, Any]) -> None:
    from statedir.bus.replay import changed_field

    with pytest.raises(StatedirError):
        changed_field(old, new, append=False)

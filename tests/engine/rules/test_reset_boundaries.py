"""Reset boundaries: the hash checked against an independent RFC 8785 implementation, and resume."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import rfc8785

from statedir import api
from statedir.engine.rules import reset_boundaries
from statedir.errors import StatedirError
from statedir.files import yaml
from tests.support.util import CLEAR_ITEMS, cli, cli_json, segment


def independent_hash(prior: list[dict], entry: dict) -> str:
    lines = [rfc8785.dumps(e) for e in prior if e["kind"] == "boundary"]
    lines.append(rfc8785.dumps({**entry, "hash": "000000000000"}))
    return hashlib.sha256(b"".join(line + b"\n" for line in lines)).hexdigest()[:12]


VECTORS = [
    {"kind": "boundary", "hash": "000000000000", "at": "2026-11-29T12:00:00Z", "stage": "1", "next": "2",
     "pending_decision": None},
    {"kind": "boundary", "hash": "000000000000", "at": "2026-11-29T12:30:00Z", "stage": "3", "next": None,
     "pending_decision": {"question": "après ↯ \"quoted\"\n", "options": [
         {"value": "2", "next_stage": "2"}, {"value": "aborted", "next_stage": "aborted"}]}},
]


def test_jcs_matches_rfc8785() -> None:
    for value in [*VECTORS, {"b": [1, True, None], "a": "\u20ac\u0007", "é": {"z": -5, "\U0001F600": 0}}]:
        assert reset_boundaries.jcs(value).encode() == rfc8785.dumps(value)


def test_hash_chain_matches_an_independent_computation() -> None:
    first = {**VECTORS[0], "hash": reset_boundaries.boundary_hash([], VECTORS[0])}
    assert first["hash"] == independent_hash([], VECTORS[0])
    resume = {"kind": "resume", "hash": first["hash"], "at": "x", "stage": "1", "mode": None, "choice": None}
    second = reset_boundaries.boundary_hash([first, resume], VECTORS[1])
    assert second == independent_hash([first], VECTORS[1])
    # A hand-checked vector: SHA-256 of the canonical first entry (hash zeroed) plus LF.
    canonical = ('{"at":"2026-11-29T12:00:00Z","hash":"000000000000","kind":"boundary","next":"2",'
                 '"pending_decision":null,"stage":"1"}\n')
    assert first["hash"] == hashlib.sha256(canonical.encode()).hexdigest()[:12]


@pytest.fixture
def sd(repo: Path) -> api.StateDir:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state", reset_boundaries=True)
    sd.new("r1", topic="t")
    return sd


def boundaries(repo: Path) -> list[dict]:
    raw = (repo / "state" / "runs" / "r1" / segment("reset_boundary")).read_bytes()
    return yaml.to_plain(yaml.load(raw)) or []


def test_full_checkpoints_append_boundaries_and_resume_consumes_one(sd: api.StateDir, repo: Path) -> None:
    sd.stage("r1", "1", "in_progress")
    sd.stage("r1", "1", "completed")
    entries = boundaries(repo)
    assert len(entries) == 1 and entries[0]["kind"] == "boundary" and entries[0]["next"] == "2"
    assert entries[0]["hash"] == independent_hash([], entries[0])
    with pytest.raises(StatedirError) as unknown:
        sd.resume("r1", "0123456789ab")
    assert unknown.value.code == "ILLEGAL_TRANSITION"
    result = sd.resume("r1", entries[0]["hash"])
    assert sd.get("r1", "current_stage") == "2" and sd.get("r1", "stages.2.status") == "in_progress"
    assert result["commit"]
    with pytest.raises(StatedirError, match="already resumed"):
        sd.resume("r1", entries[0]["hash"])
    assert [e["kind"] for e in boundaries(repo)] == ["boundary", "resume"]


def test_mandatory_checkpoints_are_not_boundaries(sd: api.StateDir, repo: Path) -> None:
    sd.stage("r1", "1", "in_progress")
    sd.material("r1", ["paper_draft"])
    sd.stage("r1", "1", "completed")
    sd.confirm("r1")
    sd.stage("r1", "2", "completed")
    sd.confirm("r1")
    sd.integrity("r1", "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    sd.checklist("r1", "2.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage("r1", "2.5", "completed")
    entries = boundaries(repo)
    assert [e["stage"] for e in entries] == ["1", "2"]
    assert entries[1]["hash"] == independent_hash(entries[:1], entries[1])


def test_pending_decision_must_be_answered(sd: api.StateDir, repo: Path) -> None:
    orch, integ = "pipeline_orchestrator", "integrity_verification"
    sd.stage("r1", "1", "in_progress")
    sd.material("r1", ["paper_draft"])
    for stage in ("1", "2"):
        sd.stage("r1", stage, "completed")
        sd.confirm("r1")
    sd.integrity("r1", "2.5", "PASS", refs_total=1, refs_verified=1, actor=integ)
    sd.checklist("r1", "2.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage("r1", "2.5", "completed")
    sd.confirm("r1", response="continue")
    sd.material("r1", ["review_reports"])
    sd.material("r1", ["revision_roadmap"])
    sd.stage("r1", "3", "completed", decision="accept")
    sd.confirm("r1", response="continue")
    sd.integrity("r1", "4.5", "PASS", refs_total=1, refs_verified=1, actor=integ)
    sd.checklist("r1", "4.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage("r1", "4.5", "completed", actor=orch)
    sd.confirm("r1", response="continue", format="apa7")
    sd.stage("r1", "5", "completed")
    last = boundaries(repo)[-1]
    assert last["stage"] == "5" and [o["value"] for o in last["pending_decision"]["options"]] == ["6", "completed"]
    assert last["hash"] == independent_hash(boundaries(repo)[:-1], last)
    rc, out = cli_json("resume", "r1", last["hash"], cwd=repo)
    assert rc == 2 and "--choice" in out["error"]["message"]  # type: ignore[index]
    rc, out = cli_json("resume", "r1", last["hash"], "--choice", "completed", cwd=repo)
    assert rc == 0, out
    assert sd.get("r1", "pipeline_state") == "completed" and sd.get("r1", "stages.6.status") == "skipped"
    assert boundaries(repo)[-1] == {**boundaries(repo)[-1], "kind": "resume", "chosen_branch": "completed"}
    rc, out = cli_json("resume", "r1", last["hash"], "--choice", "completed", cwd=repo)
    assert rc == 1
    assert cli("resume", "r1", "--help").returncode == 0

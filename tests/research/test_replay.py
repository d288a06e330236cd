"""verify holds every research commit to the ledger's own rules (`research.rules`, which the
write path checks too): every action used legally verifies clean; a commit with research
trailers that rewrites a write-once record, deletes one, changes a fixed field, leaves a
dangling link or writes outside the records is a finding."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.files import yaml
from statedir.research import Ledger
from statedir.research.kinds import KINDS, iso, now
from statedir.store import layout
from tests.support.history import forge
from tests.support.util import copy_of


@pytest.fixture
def filled(sd: api.StateDir, repo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every write action once (made once per process and copied): ids of the records made."""
    return copy_of("research-every-action", lambda made: every_action(made.research), repo, tmp_path_factory)[1]


def every_action(ledger: Ledger) -> dict[str, Any]:
    run = ledger.start_run("deep-research", question_text="Does it need offline support?")
    source = ledger.create_source("A paper", doi="10.1/x", authors="Ada, Bob", year=2026)
    evidence = ledger.create_evidence(source["id"], run["question_id"], "it does", "supports")
    claim = ledger.record_claim(run["id"], "offline matters", confidence="high", evidence_id=evidence["id"])
    result = ledger.record_result(run["id"], "a summary", artifact_role="report", artifact_path="r.md")
    ledger.complete_run(run["id"], "completed")
    ledger.set_hypothesis_status(run["hypothesis_id"], "supported")
    ledger.set_experiment_status(run["experiment_id"], "completed")
    ledger.set_source_screening(source["id"], "excluded", exclusion_reason="off topic")
    ledger.set_source_evidence_tier(source["id"], "A")
    ledger.answer_question(run["question_id"])
    project = ledger.create_project("P")
    ledger.create_question("Q2", project_id=project["id"])
    ledger.start_run("standalone")
    return {"run": run, "claim": claim, "result": result, "source": source}


def encode(kind: Any, data: dict[str, Any]) -> bytes:
    """A record's bytes as the ledger writes them: the schema line, `schema_version` first."""
    rel = kind.rel(data["id"])
    body = {"schema_version": 1, **{k: v for k, v in data.items() if k != "schema_version"}}
    return yaml.dump(body, layout.schema_ref(rel)).encode()


def record(store: Path, kind: str, entity_id: str) -> dict[str, Any]:
    from statedir.research.records import parse

    rel = KINDS[kind].rel(entity_id)
    return parse((store / rel).read_bytes(), rel)


def test_every_action_used_legally_verifies_clean(sd: api.StateDir, filled: dict[str, Any]) -> None:
    assert sd.verify() == {"clean": True, "checked": 15, "findings": []}


@pytest.mark.parametrize("kind, key, change, says", [
    ("claim", "claim", {"statement": "offline does not matter"}, "written once"),
    ("result", "result", {"summary": "another"}, "written once"),
    ("run", "run", {"skill": "someone-else"}, "skill never change"),
    ("run", "run", {"status": "running"}, "completed, failed only"),
    ("run", "run", {"question_id": "q_20260101_000000"}, "question_id never change"),
])
def test_a_changed_record_the_ledger_would_refuse_is_illegal(sd: api.StateDir, repo: Path, store: Path,
                                                            filled: dict[str, Any], kind: str, key: str,
                                                            change: dict[str, Any], says: str) -> None:
    entity_id = filled[key]["id"]
    rel = KINDS[kind].rel(entity_id)
    data = {**record(store, kind, entity_id), **change}
    sha = forge(repo, {rel: encode(KINDS[kind], data)}, action="research", run=filled["run"]["id"])
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "illegal", rel)], findings
    assert says in findings[0]["message"], findings[0]["message"]


def test_deleting_records_is_illegal(sd: api.StateDir, repo: Path, store: Path, filled: dict[str, Any]) -> None:
    runs = sorted(p.relative_to(store).as_posix() for p in (store / "research" / "runs").iterdir())
    sha = forge(repo, dict.fromkeys(runs), action="research")
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"]) for f in findings] == [(sha, "illegal")]
    assert "never deletes" in findings[0]["message"] and findings[0]["file"] in runs


def test_a_new_record_must_link_to_records_that_exist(sd: api.StateDir, repo: Path, filled: dict[str, Any]) -> None:
    claim = {"event": "claim", "id": "clm_20260101_abcdef", "run_id": "run_20260101_000000", "statement": "s",
             "confidence": None, "evidence_ref": None, "evidence_id": None, "ts": iso(now())}  # its commit's time
    rel = KINDS["claim"].rel(claim["id"])
    sha = forge(repo, {rel: encode(KINDS["claim"], claim)}, action="research")
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "illegal", rel)]
    assert "UNKNOWN_RUN" in findings[0]["message"]
    claim.update(id="clm_20260101_abcde0", run_id=filled["run"]["id"])  # linked to a run that exists
    forge(repo, {KINDS["claim"].rel(claim["id"]): encode(KINDS["claim"], claim)}, action="research")
    assert [f["commit"] for f in sd.verify()["findings"]] == [sha]


@pytest.mark.parametrize("rel, says", [("research/.gitattributes", "merged"), ("research/notes.md", "not a YAML"),
                                       ("research/claims/x.json", "not a YAML"),
                                       ("research/drafts/x.yaml", "no schema")])
def test_a_file_the_ledger_never_writes_is_reported(sd: api.StateDir, repo: Path, filled: dict[str, Any],
                                                    rel: str, says: str) -> None:
    sha = forge(repo, {rel: b"* merge=union\n"}, action="research")
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "illegal", rel)]
    assert says in findings[0]["message"], findings[0]["message"]


def test_the_write_path_checks_the_same_rules(store: Path, filled: dict[str, Any]) -> None:
    from statedir.research import rules

    run = record(store, "run", filled["run"]["id"])
    for change in ({"skill": "x"}, {"status": "running"}):
        with pytest.raises(StatedirError):
            rules.check(KINDS["run"], run["id"], run, {**run, **change}, lambda kind, entity_id: True)
    with pytest.raises(StatedirError, match="written once"):
        claim = record(store, "claim", filled["claim"]["id"])
        rules.check(KINDS["claim"], claim["id"], claim, {**claim, "statement": "x"}, lambda kind, entity_id: True)
    with pytest.raises(StatedirError, match="does not exist"):
        rules.check(KINDS["run"], run["id"], None, run, lambda kind, entity_id: False)
    rules.check(KINDS["run"], run["id"], run, {**run, "status": "failed", "ended_at": "2026-01-01T00:00:00Z"},
                lambda kind, entity_id: True)

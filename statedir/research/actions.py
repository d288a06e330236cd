"""`state.py`'s vocabulary: one action name and its flag values -> one Ledger call.

Kept apart from the typer callback so the flag-to-argument mapping is plain, testable code.
"""
from __future__ import annotations

from typing import Any

from statedir.errors import InvalidValue
from statedir.hints import opt
from statedir.research.ledger import Ledger

ACTIONS = ("create-project", "create-question", "start-run", "complete-run", "answer-question",
           "abandon-question", "record-result", "record-claim", "create-hypothesis", "set-hypothesis-status",
           "create-experiment", "set-experiment-status", "create-source", "set-source-screening",
           "set-source-evidence-tier", "create-evidence", "query", "validate", "rebuild-index", "report")


def _need(values: dict[str, Any], *names: str) -> None:
    for name in names:
        value = values.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise InvalidValue(opt(name) + " is required", flag=f"--{name.replace('_', '-')}")


def run(ledger: Ledger, action: str, v: dict[str, Any]) -> Any:
    """Do `action` with flag values `v` (keys are the flags' names with underscores)."""
    by = v.get("skill") or ledger.default_creator
    if action == "create-project":
        _need(v, "name")
        return ledger.create_project(v["name"], description=v.get("description"), created_by=by)
    if action == "create-question":
        _need(v, "question")
        return ledger.create_question(v["question"], by, project_id=v.get("project_id"))
    if action == "start-run":
        _need(v, "skill")
        return ledger.start_run(v["skill"], mode=v.get("mode"), question_id=v.get("question_id"),
                                question=v.get("question"), hypothesis_id=v.get("hypothesis_id"),
                                experiment_id=v.get("experiment_id"), project_id=v.get("project_id"))
    if action == "complete-run":
        _need(v, "run_id", "status")
        return ledger.complete_run(v["run_id"], v["status"])
    if action in ("answer-question", "abandon-question"):
        _need(v, "question_id")
        return ledger.set_question_status(v["question_id"], "answered" if action == "answer-question" else "abandoned")
    if action == "record-result":
        _need(v, "run_id", "summary")
        return ledger.record_result(v["run_id"], v["summary"], artifact_role=v.get("artifact_role"),
                                    artifact_path=v.get("artifact_path"))
    if action == "record-claim":
        _need(v, "run_id", "statement")
        return ledger.record_claim(v["run_id"], v["statement"], confidence=v.get("confidence"),
                                   evidence=v.get("evidence"), evidence_id=v.get("evidence_id"))
    if action == "create-hypothesis":
        _need(v, "question_id", "statement")
        return ledger.create_hypothesis(v["question_id"], v["statement"], created_by=by)
    if action == "set-hypothesis-status":
        _need(v, "hypothesis_id", "status")
        return ledger.set_hypothesis_status(v["hypothesis_id"], v["status"])
    if action == "create-experiment":
        _need(v, "hypothesis_id", "description")
        return ledger.create_experiment(v["hypothesis_id"], v["description"], created_by=by)
    if action == "set-experiment-status":
        _need(v, "experiment_id", "status")
        return ledger.set_experiment_status(v["experiment_id"], v["status"])
    if action == "create-source":
        _need(v, "title")
        return ledger.create_source(v["title"], authors=v.get("authors"), year=v.get("year"), doi=v.get("doi"),
                                    url=v.get("url"), venue=v.get("venue"), evidence_tier=v.get("evidence_tier"),
                                    project_id=v.get("project_id"), created_by=by)
    if action == "set-source-screening":
        _need(v, "source_id", "screening_status")
        return ledger.set_source_screening(v["source_id"], v["screening_status"],
                                           exclusion_reason=v.get("exclusion_reason"))
    if action == "set-source-evidence-tier":
        _need(v, "source_id", "evidence_tier")
        return ledger.set_source_evidence_tier(v["source_id"], v["evidence_tier"])
    if action == "create-evidence":
        _need(v, "source_id", "question_id", "statement", "stance")
        return ledger.create_evidence(v["source_id"], v["question_id"], v["statement"], v["stance"],
                                      hypothesis_id=v.get("hypothesis_id"), limitations=v.get("limitations"),
                                      uncertainty_note=v.get("uncertainty_note"), created_by=by)
    if action == "query":
        return ledger.query(**{k: v.get(k) for k in ("run_id", "question_id", "project_id", "hypothesis_id",
                                                     "experiment_id", "source_id", "skill", "since")})
    if action == "validate":
        return ledger.validate()
    if action == "rebuild-index":
        return ledger.rebuild_index(full=bool(v.get("full")))
    if action == "report":
        return ledger.report(v.get("since"))
    raise InvalidValue(f"unknown research action {action!r}")

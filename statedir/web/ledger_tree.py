"""The research ledger as a tree: projects, their questions, each question's hypotheses,
evidence and runs, each run's results and claims (plain data for the research page)."""
from __future__ import annotations

from typing import Any


def _by(records: list[dict[str, Any]], key: str) -> dict[Any, list[dict[str, Any]]]:
    out: dict[Any, list[dict[str, Any]]] = {}
    for record in records:
        out.setdefault(record.get(key), []).append(record)
    return out


def tree(records: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Projects, each with `questions`; a question with `hypotheses`, `evidence`, `runs`; a
    run with `results` and `claims`; a hypothesis with its `experiments`. A run that names
    no question hangs under a project-less pseudo project."""
    results, claims = _by(records["result"], "run_id"), _by(records["claim"], "run_id")
    experiments = _by(records["experiment"], "hypothesis_id")
    evidence = _by(records["evidence"], "question_id")
    hypotheses = _by(records["hypothesis"], "question_id")
    hypothesis_question = {h["id"]: h.get("question_id") for h in records["hypothesis"]}
    experiment_hypothesis = {e["id"]: e.get("hypothesis_id") for e in records["experiment"]}
    runs: dict[Any, list[dict[str, Any]]] = {}
    for run in records["run"]:
        question = run.get("question_id")
        if question is None and run.get("experiment_id"):
            question = hypothesis_question.get(experiment_hypothesis.get(run["experiment_id"]))
        if question is None and run.get("hypothesis_id"):
            question = hypothesis_question.get(run["hypothesis_id"])
        runs.setdefault(question, []).append(
            {**run, "results": results.get(run["id"], []), "claims": claims.get(run["id"], [])})
    questions = _by([{**q, "hypotheses": [{**h, "experiments": experiments.get(h["id"], [])}
                                          for h in hypotheses.get(q["id"], [])],
                      "evidence": evidence.get(q["id"], []), "runs": runs.get(q["id"], [])}
                     for q in records["question"]], "project_id")
    out = [{**p, "questions": questions.get(p["id"], [])} for p in records["project"]]
    if runs.get(None):
        out.append({"id": None, "name": "(runs naming no question)", "questions": [
            {"id": None, "text": "", "hypotheses": [], "evidence": [], "runs": runs[None]}]})
    return out

"""Decisions for the research chain: Project -> Question -> Hypothesis -> Experiment -> Run.

Each function takes a ResearchDraft and the action's values, checks every foreign key against the
files, and puts what it makes on the ResearchDraft; none writes anything itself.
"""
from __future__ import annotations

from typing import Any

from statedir.errors import IllegalTransition, InvalidValue
from statedir.hints import opt
from statedir.research.kinds import (
    DEFAULT_PROJECT_ID,
    EXPERIMENT_STATUSES,
    HYPOTHESIS_STATUSES,
    KINDS,
    QUESTION_STATUSES,
    RUN_CLOSING_STATUSES,
    check_id,
    iso,
)
from statedir.research.writes import ResearchDraft

PROJECT, QUESTION, HYPOTHESIS, EXPERIMENT, RUN = (KINDS[k] for k in
                                                  ("project", "question", "hypothesis", "experiment", "run"))


def required(value: Any, name: str) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InvalidValue(f"{name} is required", field=name)
    return value


def one_of(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise InvalidValue(f"{name} must be one of {', '.join(allowed)}, got {value!r}", field=name,
                           allowed=list(allowed))
    return str(value)


def project_for(draft: ResearchDraft, project_id: str | None) -> str:
    """The Project a new Question or Source belongs to: the one named (it must exist), else
    proj_default, made in the same commit the first time anything needs it."""
    if project_id is not None:
        return draft.require(PROJECT, check_id(project_id))["id"]
    if draft.get(PROJECT, DEFAULT_PROJECT_ID) is None:
        draft.put(PROJECT, {"id": DEFAULT_PROJECT_ID, "name": "Default Project", "description": None,
                            "status": "active", "created_at": iso(draft.moment), "created_by": "user"})
    return DEFAULT_PROJECT_ID


def create_project(draft: ResearchDraft, name: str, description: str | None, created_by: str) -> dict[str, Any]:
    required(name, "name")
    return draft.put(PROJECT, {"id": draft.mint(PROJECT), "name": name, "description": description,
                               "status": "active", "created_at": iso(draft.moment), "created_by": created_by})


def create_question(draft: ResearchDraft, text: str, origin_skill: str, project_id: str | None) -> dict[str, Any]:
    required(text, "question")
    owner = project_for(draft, project_id)
    stamp = iso(draft.moment)
    return draft.put(QUESTION, {"id": draft.mint(QUESTION), "text": text, "origin_skill": origin_skill,
                                "project_id": owner, "status": "open", "created_at": stamp, "updated_at": stamp})


def set_question_status(draft: ResearchDraft, question_id: str, status: str) -> dict[str, Any]:
    one_of(status, QUESTION_STATUSES, "status")
    record = draft.require(QUESTION, check_id(required(question_id, "question_id")))
    return draft.put(QUESTION, {**record, "status": status, "updated_at": iso(draft.moment)})


def create_hypothesis(draft: ResearchDraft, question_id: str, statement: str, created_by: str,
                      synthetic: bool = False) -> dict[str, Any]:
    required(statement, "statement")
    draft.require(QUESTION, check_id(required(question_id, "question_id")))
    return draft.put(HYPOTHESIS, {"id": draft.mint(HYPOTHESIS), "question_id": question_id,
                                  "statement": statement, "status": "proposed", "synthetic": synthetic,
                                  "created_at": iso(draft.moment), "created_by": created_by})


def set_hypothesis_status(draft: ResearchDraft, hypothesis_id: str, status: str) -> dict[str, Any]:
    one_of(status, HYPOTHESIS_STATUSES, "status")
    record = draft.require(HYPOTHESIS, check_id(required(hypothesis_id, "hypothesis_id")))
    return draft.put(HYPOTHESIS, {**record, "status": status})


def create_experiment(draft: ResearchDraft, hypothesis_id: str, description: str, created_by: str,
                      synthetic: bool = False) -> dict[str, Any]:
    required(description, "description")
    draft.require(HYPOTHESIS, check_id(required(hypothesis_id, "hypothesis_id")))
    return draft.put(EXPERIMENT, {"id": draft.mint(EXPERIMENT), "hypothesis_id": hypothesis_id,
                                  "description": description, "status": "planned", "synthetic": synthetic,
                                  "created_at": iso(draft.moment), "created_by": created_by})


def set_experiment_status(draft: ResearchDraft, experiment_id: str, status: str) -> dict[str, Any]:
    one_of(status, EXPERIMENT_STATUSES, "status")
    record = draft.require(EXPERIMENT, check_id(required(experiment_id, "experiment_id")))
    return draft.put(EXPERIMENT, {**record, "status": status})


def start_run(draft: ResearchDraft, skill: str, *, mode: str | None = None, question_id: str | None = None,
              question_text: str | None = None, hypothesis_id: str | None = None,
              experiment_id: str | None = None, project_id: str | None = None) -> dict[str, Any]:
    """A new Run at one level of the chain; the levels below the one named are filled with
    `synthetic: true` placeholders (their ids, and a new Question's, in the result's `created`), and
    a Run naming no level stays standalone."""
    required(skill, "skill")
    if question_id and question_text:
        raise InvalidValue("{opt:question} and {opt:question_id} are mutually exclusive")
    named = [(flag, said) for flag, said, given in (
        ("--experiment-id", opt("experiment_id"), experiment_id),
        ("--hypothesis-id", opt("hypothesis_id"), hypothesis_id),
        ("--question/--question-id", f"{opt('question')}/{opt('question_id')}", question_id or question_text),
    ) if given]
    if len(named) > 1:
        levels = [flag for flag, _ in named]  # the details keep the command line's flags (the ledger's contract)
        raise InvalidValue(f"{opt('start_run')} takes at most one level of the chain, got "
                           f"{' and '.join(said for _, said in named)}", levels=levels)
    placeholder = f"Auto-created for run started by {skill}"
    created = []  # the records made beside the Run, said in the result (never silently)
    if question_text or question_id:
        if question_text:
            question_id = create_question(draft, question_text, skill, project_id)["id"]
            created.append(question_id)
        hypothesis_id = create_hypothesis(draft, str(question_id), placeholder, skill, synthetic=True)["id"]
        created.append(hypothesis_id)
    if hypothesis_id and not experiment_id:
        experiment_id = create_experiment(draft, hypothesis_id, placeholder, skill, synthetic=True)["id"]
        created.append(experiment_id)
    resolved_question = None
    if experiment_id:
        experiment = draft.require(EXPERIMENT, check_id(required(experiment_id, "experiment_id")))
        hypothesis_id = experiment["hypothesis_id"]
        resolved_question = draft.require(HYPOTHESIS, check_id(str(hypothesis_id)))["question_id"]
    run = draft.put(RUN, {"id": draft.mint(RUN), "skill": skill, "mode": mode, "question_id": resolved_question,
                          "hypothesis_id": hypothesis_id, "experiment_id": experiment_id, "status": "running",
                          "started_at": iso(draft.moment), "ended_at": None})
    return {**run, "created": created} if created else run


def running_run(draft: ResearchDraft, run_id: str, what: str) -> dict[str, Any]:
    """The Run `run_id`, refused (ILLEGAL_TRANSITION, nothing written) unless it is still running:
    a completed or failed Run takes no more Results, Claims or status."""
    run = draft.require(RUN, check_id(required(run_id, "run_id")))
    if run.get("status") != "running":
        raise IllegalTransition(f"run {run_id} is {run.get('status')}: {what} on a running Run only; a closed Run "
                                "is read ({opt:query} {opt:run_id}), new work goes on a new run (start a new run "
                                "with {opt:start_run})", run_id=run_id, status=run.get("status"))
    return run


def complete_run(draft: ResearchDraft, run_id: str, status: str) -> dict[str, Any]:
    one_of(status, RUN_CLOSING_STATUSES, "status")
    record = running_run(draft, run_id, "a Run is completed or failed")
    return draft.put(RUN, {**record, "status": status, "ended_at": iso(draft.moment)})

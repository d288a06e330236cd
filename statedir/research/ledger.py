"""The research ledger's Python API: research-lab-skills' Agent State (state.py) operations on a statedir store.

    import statedir
    ledger = statedir.open("state").research
    run = ledger.start_run("deep-research", question="Does this need offline support?")
    ledger.record_claim(run["id"], "Region X diverges from the plan", confidence="high", evidence="notes.md")

Arguments take the names of `statedir research`'s flags (`question=`, `skill=`, `evidence=`); the
older names (`question_text=`, `origin_skill=`, `created_by=`, `evidence_ref=`) still work.
Every write is one commit under the store lock; reads answer from the SQLite index.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from statedir.argument_checks import checked
from statedir.errors import InvalidValue
from statedir.research import chain, integrity, query, writes
from statedir.research import evidence as evidence_writes  # `evidence` is record_claim's argument
from statedir.store.store import Store

DEFAULT_CREATOR = "user"  # state.py's created_by when no skill is named


def _one_of(flag_name: str, flag_value: Any, old_name: str, old_value: Any, default: Any = None) -> Any:
    """An argument given by its flag's name or its older name (never both, unless alike)."""
    if flag_value is not None and old_value is not None and flag_value != old_value:
        raise InvalidValue(f"give {flag_name}= or {old_name}= (the same argument), not both",
                           arguments=[flag_name, old_name])
    return flag_value if flag_value is not None else old_value if old_value is not None else default


@checked
class Ledger:
    """The research records of one store (arguments checked as the store's API checks them)."""

    def __init__(self, store: Store, *, lock_timeout: float | None = None, actor: str | None = None,
                 expect: str | None = None) -> None:
        """`expect`: the commit the caller last read; a write is refused with HEAD_MOVED where the
        ledger's records changed after it."""
        self.store = store
        self.lock_timeout = lock_timeout
        self.actor = actor
        self.expect = expect

    @property
    def default_creator(self) -> str:
        """A record's created_by where no skill is named: the role acting (an MCP server's, or
        --actor), else state.py's `user` (the person at the terminal)."""
        return self.actor or DEFAULT_CREATOR

    def _write(self, decide: Callable[..., dict[str, Any]], what: str, *, by: str | None,
               run_of: Callable[[dict[str, Any]], str] = lambda _: "-") -> dict[str, Any]:
        actor = self.actor or by or DEFAULT_CREATOR
        with self.store.expecting(self.expect):
            return writes.commit(self.store, decide, actor=actor, lock_timeout=self.lock_timeout, run_id=run_of,
                                 summary=lambda r: f"research: {what} {r.get('id')}")

    # --- the chain ------------------------------------------------------------------------------
    def create_project(self, name: str, *, description: str | None = None, skill: str | None = None,
                       created_by: str | None = None) -> dict[str, Any]:
        created_by = _one_of("skill", skill, "created_by", created_by, self.default_creator)
        return self._write(partial(chain.create_project, name=name, description=description, created_by=created_by),
                           "create project", by=created_by)

    def create_question(self, text: str | None = None, origin_skill: str | None = None, *,
                        question: str | None = None, skill: str | None = None,
                        project_id: str | None = None) -> dict[str, Any]:
        text = _one_of("question", question, "text", text)
        if text is None:
            raise InvalidValue("create_question() needs question= (the question's text)", argument="question")
        origin_skill = _one_of("skill", skill, "origin_skill", origin_skill, self.default_creator)
        return self._write(partial(chain.create_question, text=text, origin_skill=origin_skill, project_id=project_id),
                           "create question", by=origin_skill)

    def set_question_status(self, question_id: str, status: str) -> dict[str, Any]:
        return self._write(partial(chain.set_question_status, question_id=question_id, status=status),
                           f"question {status}", by=None)

    def answer_question(self, question_id: str) -> dict[str, Any]:
        return self.set_question_status(question_id, "answered")

    def abandon_question(self, question_id: str) -> dict[str, Any]:
        return self.set_question_status(question_id, "abandoned")

    def create_hypothesis(self, question_id: str, statement: str, *, skill: str | None = None,
                          created_by: str | None = None) -> dict[str, Any]:
        created_by = _one_of("skill", skill, "created_by", created_by, self.default_creator)
        return self._write(partial(chain.create_hypothesis, question_id=question_id, statement=statement,
                                   created_by=created_by), "create hypothesis", by=created_by)

    def set_hypothesis_status(self, hypothesis_id: str, status: str) -> dict[str, Any]:
        return self._write(partial(chain.set_hypothesis_status, hypothesis_id=hypothesis_id, status=status),
                           f"hypothesis {status}", by=None)

    def create_experiment(self, hypothesis_id: str, description: str, *, skill: str | None = None,
                          created_by: str | None = None) -> dict[str, Any]:
        created_by = _one_of("skill", skill, "created_by", created_by, self.default_creator)
        return self._write(partial(chain.create_experiment, hypothesis_id=hypothesis_id, description=description,
                                   created_by=created_by), "create experiment", by=created_by)

    def set_experiment_status(self, experiment_id: str, status: str) -> dict[str, Any]:
        return self._write(partial(chain.set_experiment_status, experiment_id=experiment_id, status=status),
                           f"experiment {status}", by=None)

    def start_run(self, skill: str, *, mode: str | None = None, question: str | None = None,
                  question_id: str | None = None, hypothesis_id: str | None = None,
                  experiment_id: str | None = None, project_id: str | None = None,
                  question_text: str | None = None) -> dict[str, Any]:
        """A run of `skill`; `question=` (new), `question_id=`, `hypothesis_id=` or `experiment_id=`
        ties it to one level of the chain (placeholders made below it)."""
        question_text = _one_of("question", question, "question_text", question_text)
        return self._write(partial(chain.start_run, skill=skill, mode=mode, question_id=question_id,
                                   question_text=question_text, hypothesis_id=hypothesis_id,
                                   experiment_id=experiment_id, project_id=project_id),
                           "start run", by=skill, run_of=lambda r: str(r["id"]))

    def complete_run(self, run_id: str, status: str) -> dict[str, Any]:
        return self._write(partial(chain.complete_run, run_id=run_id, status=status), f"run {status}",
                           by=None, run_of=lambda r: str(r["id"]))

    # --- beside the chain -----------------------------------------------------------------------
    def create_source(self, title: str, *, authors: str | None = None, year: int | None = None,
                      doi: str | None = None, url: str | None = None, venue: str | None = None,
                      evidence_tier: str | None = None, project_id: str | None = None,
                      skill: str | None = None, created_by: str | None = None) -> dict[str, Any]:
        created_by = _one_of("skill", skill, "created_by", created_by, self.default_creator)
        return self._write(partial(evidence_writes.create_source, title=title, authors=authors, year=year, doi=doi,
                                   url=url, venue=venue, evidence_tier=evidence_tier, project_id=project_id,
                                   created_by=created_by), "create source", by=created_by)

    def set_source_screening(self, source_id: str, screening_status: str, *,
                             exclusion_reason: str | None = None) -> dict[str, Any]:
        return self._write(partial(evidence_writes.set_source_screening, source_id=source_id,
                                   screening_status=screening_status, exclusion_reason=exclusion_reason),
                           f"source {screening_status}", by=None)

    def set_source_evidence_tier(self, source_id: str, evidence_tier: str) -> dict[str, Any]:
        return self._write(partial(evidence_writes.set_source_evidence_tier, source_id=source_id,
                                   evidence_tier=evidence_tier), "source evidence tier", by=None)

    def create_evidence(self, source_id: str, question_id: str, statement: str, stance: str, *,
                        hypothesis_id: str | None = None, limitations: str | None = None,
                        uncertainty_note: str | None = None, skill: str | None = None,
                        created_by: str | None = None) -> dict[str, Any]:
        created_by = _one_of("skill", skill, "created_by", created_by, self.default_creator)
        return self._write(partial(evidence_writes.create_evidence, source_id=source_id, question_id=question_id,
                                   statement=statement, stance=stance, hypothesis_id=hypothesis_id,
                                   limitations=limitations, uncertainty_note=uncertainty_note,
                                   created_by=created_by), "create evidence", by=created_by)

    def record_result(self, run_id: str, summary: str, *, artifact_role: str | None = None,
                      artifact_path: str | None = None) -> dict[str, Any]:
        return self._write(partial(evidence_writes.record_result, run_id=run_id, summary=summary,
                                   artifact_role=artifact_role, artifact_path=artifact_path),
                           "record result", by=None, run_of=lambda r: str(r["run_id"]))

    def record_claim(self, run_id: str, statement: str, *, confidence: str | None = None,
                     evidence: str | None = None, evidence_id: str | None = None,
                     evidence_ref: str | None = None) -> dict[str, Any]:
        """`evidence=`: a free-text reference (stored as evidence_ref); `evidence_id=`: an Evidence record."""
        evidence_ref = _one_of("evidence", evidence, "evidence_ref", evidence_ref)
        return self._write(partial(evidence_writes.record_claim, run_id=run_id, statement=statement,
                                   confidence=confidence, evidence_ref=evidence_ref, evidence_id=evidence_id),
                           "record claim", by=None, run_of=lambda r: str(r["run_id"]))

    # --- reading --------------------------------------------------------------------------------
    def query(self, **filters: str | None) -> dict[str, list[dict[str, Any]]]:
        """Exactly one of run_id, question_id, project_id, hypothesis_id, experiment_id,
        source_id, skill, since: the named record and its children."""
        return query.query(self.store, **filters)

    def validate(self) -> dict[str, Any]:
        found = integrity.violations(self.store)
        return {"violations": found, "clean": not found}

    def record_aliases(self, *, held: list[list[str]] | None = None) -> dict[str, Any]:
        """Record each duplicate Source (the same DOI or normalized URL, registered on two
        machines and merged) as an alias of the earliest by history, in one commit: {aliases, commit}.
        `held`: lists of Source ids that, in order, come first where history cannot order two
        (None: the upstream's, research.arrival.upstream_held)."""
        decide = partial(evidence_writes.record_aliases, held=None if held is None else [set(ids) for ids in held])
        with self.store.expecting(self.expect):
            return writes.commit(self.store, decide, actor=self.actor or "state_tracker",
                                 lock_timeout=self.lock_timeout,
                                 summary=lambda r: f"research: record {len(r['aliases'])} duplicate source(s) "
                                                   "as aliases")

    def rebuild_index(self, *, full: bool = False) -> dict[str, Any]:
        return query.rebuild(self.store, full=full)

    def report(self, since: str | None = None) -> str:
        return query.report(self.store, since)

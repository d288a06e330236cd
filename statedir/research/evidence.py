"""Decisions beside the chain: Sources (deduplicated), Evidence, and the immutable Results
and Claims a Run records."""
from __future__ import annotations

from typing import Any

from statedir.errors import InvalidValue
from statedir.research import aliases, arrival, dedup, integrity
from statedir.research.chain import HYPOTHESIS, QUESTION, one_of, project_for, required, running_run
from statedir.research.kinds import KINDS, SCHEMA_VERSION, SCREENING, check_id, iso
from statedir.research.writes import ResearchDraft

SOURCE, EVIDENCE, RESULT, CLAIM = (KINDS[k] for k in ("source", "evidence", "result", "claim"))
STANCES = ("supports", "refutes", "mixed")
CONFIDENCE = ("low", "medium", "high")
# The roles a Result's artifact_role conventionally names (research-lab-skills' Agent State: "a
# resource-resolver role name"): resource-resolver's own list (its references/resolver_roles.yaml).
# It owns that list and a project may add roles, so another name is recorded too; these are what
# the help and tool description offer.
ARTIFACT_ROLES = ("research_log", "experiment_config", "results", "slides", "paper", "bibliography")


def create_source(draft: ResearchDraft, title: str, *, authors: str | None = None, year: int | None = None,
                  doi: str | None = None, url: str | None = None, venue: str | None = None,
                  evidence_tier: str | None = None, project_id: str | None = None,
                  created_by: str = "user") -> dict[str, Any]:
    """A new Source, or the existing one with the same DOI (else the same normalized URL);
    a title+first author+year match only sets `duplicate_hint` on the new record."""
    required(title, "title")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise InvalidValue(f"year must be an integer, got {year!r}", field="year")
    if project_id is not None:
        project_for(draft, project_id)  # an unknown project is refused even when a duplicate exists
    for column, value in (("doi", doi), ("url_norm", dedup.normalize_url(url) if url else None)):
        if value:
            hits = draft.lookup(f"SELECT id FROM sources WHERE {column} = ? ORDER BY id", (value,))
            existing = _standing(draft, [hit["id"] for hit in hits])
            if existing is not None:
                given = {"title": title, "authors": authors, "year": year, "doi": doi, "url": url, "venue": venue,
                         "evidence_tier": evidence_tier}
                ignored = [k for k, v in given.items() if v is not None and v != existing.get(k)]
                return {**_public(existing), "duplicate_hint": None, "deduplicated": True, "ignored": ignored}
    hint = None
    similar = draft.lookup("SELECT id FROM sources WHERE hint_key = ? ORDER BY created_at, id LIMIT 1",
                         (dedup.hint_key(title, authors, year),))
    if similar:
        hint = {"source_id": similar[0]["id"], "reason": "title+author+year match"}
    record = draft.put(SOURCE, {
        "id": draft.mint(SOURCE), "title": title, "authors": authors, "year": year, "doi": doi, "url": url,
        "venue": venue, "evidence_tier": evidence_tier, "screening_status": "pending", "exclusion_reason": None,
        "project_id": project_for(draft, project_id), "created_at": iso(draft.moment), "created_by": created_by})
    return {**record, "duplicate_hint": hint}


def _standing(draft: ResearchDraft, ids: list[str]) -> dict[str, Any] | None:
    """The Source that stands for these (one document's): an alias answered by what it names,
    two not yet recorded as one by the earlier in history (never by the date one claims)."""
    found: dict[str, dict[str, Any]] = {}
    for source_id in ids:
        record = draft.get(SOURCE, source_id)
        for _ in range(len(ids) + 1):  # an alias names a Source that is none (verify holds it so)
            if record is None or not record.get("alias_of"):
                break
            record = draft.get(SOURCE, str(record["alias_of"]))
        if record is not None:
            found[str(record["id"])] = record
    if len(found) < 2:
        return next(iter(found.values()), None)
    return found[arrival.earliest(draft.store, found)(sorted(found))]


def record_aliases(draft: ResearchDraft, held: list[set[str]] | None = None) -> dict[str, Any]:
    """Each Source that names the same document as an earlier one (two machines registered it,
    a merge brought both) recorded as that one's alias: {aliases: [{id, alias_of, key}]}.
    `held`: sets of Source ids that, in order, come first where history cannot order two."""
    sources = integrity.of_kind(draft.store, SOURCE)
    found = aliases.duplicates(sources, arrival.earliest(draft.store, sources, held))
    for duplicate in found:
        draft.put(SOURCE, {**draft.require(SOURCE, duplicate["id"]), "alias_of": duplicate["alias_of"]})
    return {"aliases": found}


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "schema_version"}


def set_source_screening(draft: ResearchDraft, source_id: str, screening_status: str,
                         exclusion_reason: str | None = None) -> dict[str, Any]:
    one_of(screening_status, SCREENING, "screening_status")
    record = draft.require(SOURCE, check_id(required(source_id, "source_id")))
    return draft.put(SOURCE, {**record, "screening_status": screening_status, "exclusion_reason": exclusion_reason})


def set_source_evidence_tier(draft: ResearchDraft, source_id: str, evidence_tier: str) -> dict[str, Any]:
    required(evidence_tier, "evidence_tier")
    record = draft.require(SOURCE, check_id(required(source_id, "source_id")))
    return draft.put(SOURCE, {**record, "evidence_tier": evidence_tier})


def create_evidence(draft: ResearchDraft, source_id: str, question_id: str, statement: str, stance: str, *,
                    hypothesis_id: str | None = None, limitations: str | None = None,
                    uncertainty_note: str | None = None, created_by: str = "user") -> dict[str, Any]:
    required(statement, "statement")
    one_of(stance, STANCES, "stance")
    draft.require(SOURCE, check_id(required(source_id, "source_id")))
    draft.require(QUESTION, check_id(required(question_id, "question_id")))
    if hypothesis_id is not None:
        draft.require(HYPOTHESIS, check_id(hypothesis_id))
    return draft.put(EVIDENCE, {
        "id": draft.mint(EVIDENCE), "source_id": source_id, "question_id": question_id,
        "hypothesis_id": hypothesis_id, "statement": statement, "stance": stance, "limitations": limitations,
        "uncertainty_note": uncertainty_note, "created_at": iso(draft.moment), "created_by": created_by})


def record_result(draft: ResearchDraft, run_id: str, summary: str, *, artifact_role: str | None = None,
                  artifact_path: str | None = None) -> dict[str, Any]:
    required(summary, "summary")
    if bool(artifact_role) != bool(artifact_path):
        raise InvalidValue("{opt:artifact_role} and {opt:artifact_path} must be given together")
    running_run(draft, run_id, "a Result is recorded")
    return draft.put(RESULT, {
        "event": "result", "id": draft.mint(RESULT), "run_id": run_id, "summary": summary,
        "artifact_ref": {"role": artifact_role, "path": artifact_path} if artifact_role else None,
        "ts": iso(draft.moment), "schema_version": SCHEMA_VERSION})


def record_claim(draft: ResearchDraft, run_id: str, statement: str, *, confidence: str | None = None,
                 evidence_ref: str | None = None, evidence_id: str | None = None) -> dict[str, Any]:
    required(statement, "statement")
    if confidence is not None:
        one_of(confidence, CONFIDENCE, "confidence")
    running_run(draft, run_id, "a Claim is recorded")
    if evidence_id is not None:
        draft.require(EVIDENCE, check_id(evidence_id))
    return draft.put(CLAIM, {
        "event": "claim", "id": draft.mint(CLAIM), "run_id": run_id, "statement": statement,
        "confidence": confidence, "evidence_ref": evidence_ref, "evidence_id": evidence_id,
        "ts": iso(draft.moment), "schema_version": SCHEMA_VERSION})

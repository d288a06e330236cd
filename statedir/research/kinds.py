"""The nine research entities as data: folder, id prefix, schema, index columns and links.

Every entity is one YAML file, `research/<folder>/<id>.yaml`; a Result or Claim file is
written once and never again, so two machines adding entities never touch the same path.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from statedir.errors import InvalidId

SCHEMA_VERSION = 1  # the `schema_version` every research file carries
ROOT = "research"
DEFAULT_PROJECT_ID = "proj_default"
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per kind
class Kind:
    """One entity type: where its files live and how it is indexed and linked."""

    name: str        # singular, as state.py's `--validate` names it ("question")
    folder: str      # research/<folder>/
    prefix: str      # id prefix: q_20261130_ab12cd
    columns: tuple[str, ...]  # the index row, in state.py's order
    links: dict[str, str] = field(default_factory=dict)  # foreign-key field -> kind name
    event: bool = False  # immutable, written once (Result, Claim)
    # the fields a later write may change -> the values it may set (None: any the schema takes);
    # every other field is fixed when the record is made (statedir.research.rules holds both sides to it)
    updates: dict[str, tuple[str, ...] | None] = field(default_factory=dict)

    @property
    def schema(self) -> str:
        return f"research-{self.folder}"

    def rel(self, entity_id: str) -> str:
        return f"{ROOT}/{self.folder}/{check_id(entity_id)}.yaml"

    def row(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record as the index (and `--query`) shows it."""
        if self.name == "result":
            ref = record.get("artifact_ref") or {}
            record = {**record, "artifact_role": ref.get("role"), "artifact_path": ref.get("path")}
        return {column: record.get(column) for column in self.columns}


# The statuses a later write sets (a record is made open, proposed, planned, running, pending).
QUESTION_STATUSES = ("answered", "abandoned")
HYPOTHESIS_STATUSES = ("supported", "refuted", "inconclusive")
EXPERIMENT_STATUSES = ("running", "completed", "failed")
RUN_CLOSING_STATUSES = ("completed", "failed")
SCREENING = ("included", "excluded", "pending")

_AUDIT = ("created_at", "created_by")
KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("project", "projects", "proj", ("id", "name", "description", "status", *_AUDIT)),
    Kind("question", "questions", "q",
         ("id", "text", "origin_skill", "project_id", "status", "created_at", "updated_at"),
         {"project_id": "project"}, updates={"status": QUESTION_STATUSES, "updated_at": None}),
    Kind("hypothesis", "hypotheses", "hyp",
         ("id", "question_id", "statement", "status", "synthetic", *_AUDIT), {"question_id": "question"},
         updates={"status": HYPOTHESIS_STATUSES}),
    Kind("experiment", "experiments", "exp",
         ("id", "hypothesis_id", "description", "status", "synthetic", *_AUDIT), {"hypothesis_id": "hypothesis"},
         updates={"status": EXPERIMENT_STATUSES}),
    Kind("run", "runs", "run",
         ("id", "skill", "mode", "question_id", "hypothesis_id", "experiment_id", "status", "started_at", "ended_at"),
         {"experiment_id": "experiment", "hypothesis_id": "hypothesis", "question_id": "question"},
         updates={"status": RUN_CLOSING_STATUSES, "ended_at": None}),
    Kind("source", "sources", "src",
         ("id", "title", "authors", "year", "doi", "url", "venue", "evidence_tier", "screening_status",
          "exclusion_reason", "project_id", *_AUDIT), {"project_id": "project", "alias_of": "source"},
         updates={"screening_status": SCREENING, "exclusion_reason": None, "evidence_tier": None,
                  "alias_of": None}),  # set once, on a duplicate that arrived by a merge (research.aliases)
    Kind("evidence", "evidence", "evd",
         ("id", "source_id", "question_id", "hypothesis_id", "statement", "stance", "limitations",
          "uncertainty_note", *_AUDIT),
         {"source_id": "source", "question_id": "question", "hypothesis_id": "hypothesis"}),
    Kind("result", "results", "res", ("id", "run_id", "summary", "artifact_role", "artifact_path", "ts"),
         {"run_id": "run"}, event=True),
    Kind("claim", "claims", "clm",
         ("id", "run_id", "statement", "confidence", "evidence_ref", "evidence_id", "ts"),
         {"run_id": "run", "evidence_id": "evidence"}, event=True),
)}
BY_FOLDER = {k.folder: k for k in KINDS.values()}


def check_id(entity_id: str) -> str:
    if not isinstance(entity_id, str) or not ID_RE.match(entity_id) or entity_id in {".", ".."}:
        raise InvalidId(f"invalid id {entity_id!r}: ids are letters, digits and ._:- (at most 128)",
                        id=str(entity_id))
    return entity_id


def parse_rel(rel: str) -> tuple[Kind, str] | None:
    """(kind, id) of a store-relative research file path, None for anything else."""
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != ROOT or not parts[2].endswith(".yaml"):
        return None
    kind = BY_FOLDER.get(parts[1])
    entity_id = parts[2][:-5]
    return (kind, entity_id) if kind and ID_RE.match(entity_id) else None


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    """state.py's timestamp form: 2026-11-30T09:12:03Z."""
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def mint_id(kind: Kind, moment: datetime, taken: Any) -> str:
    """`<prefix>_<YYYYMMDD>_<6hex>`, unused: `taken(id)` says whether an id exists already."""
    while True:
        candidate = f"{kind.prefix}_{moment:%Y%m%d}_{os.urandom(3).hex()}"  # secrets.token_hex, without hashlib
        if not taken(candidate):
            return candidate

"""The closed vocabulary and shapes of ARS adjudication-activity bindings, as plain data.

These are the upstream project's rules (academic-research-skills, #673 frozen contract), not a
template's: the five source families in their fixed order, each family's artifact roles in
order, group counts, capture states and reason codes. Checks return messages, never raise.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from statedir.engine.adjudication_rows import (  # noqa: F401 (the contract's vocabulary)
    CAPTURED,
    FAMILY_NAMES,
    NOT_APPLICABLE,
    NOT_APPLICABLE_REASON,
    UNAVAILABLE,
    initial_rows,
)

UNAVAILABLE_REASONS = ("source_not_provided", "source_unreadable", "source_invalid", "capture_not_supported")
ROW_FIELDS = ("source_family", "capture_state", "reason_code", "artifacts")
ARTIFACT_FIELDS = ("artifact_id", "artifact_role", "artifact_group_id", "artifact_group_stage", "relative_path")
# Patterns compiled on first use (by `re`'s cache): `next` loads the contract and matches none.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
GROUP_PATTERN = r"^SOURCE-GROUP-[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"
MAX_ARTIFACTS_PER_ROW = 64
MAX_PATH = 512
MAX_ARTIFACT_BYTES = 8 << 20  # per artifact, as the upstream reader caps it
MAX_TOTAL_BYTES = 64 << 20  # all artifacts of one run


class Family:
    """One source family: its roles in order, which may be left out of a group, and how many
    groups a captured row holds. `staged` families bind each group to a review stage.

    Frozen, equal and shown as a frozen dataclass is (written by hand: dataclasses imports
    inspect, about 11 ms of `next`, which loads the contract through the rules' receipts)."""

    __slots__ = ("name", "roles", "optional", "groups", "staged")
    name: str
    roles: tuple[str, ...]
    optional: tuple[str, ...]
    groups: tuple[int, int]
    staged: bool

    def __init__(self, name: str, roles: tuple[str, ...], optional: tuple[str, ...] = (),
                 groups: tuple[int, int] = (1, 1), staged: bool = False) -> None:
        for field, value in zip(self.__slots__, (name, roles, optional, groups, staged), strict=True):
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, field) for field in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, Family):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Family({', '.join(f'{f}={getattr(self, f)!r}' for f in self.__slots__)})"


FAMILIES = (
    Family("revision_author_adjudication", ("author_adjudication_input", "author_adjudication"),
           groups=(1, 2), staged=True),
    Family("compliance_report", ("compliance_report", "compliance_override_action_receipt"),
           optional=("compliance_override_action_receipt",), groups=(1, 16)),
    Family("re_review_traceability", ("input_manifest", "precommitment", "verdict_record", "traceability")),
    Family("explicit_user_request", ("explicit_user_request_log",)),
    Family("mandatory_checkpoint_response", ("mandatory_checkpoint_response_log",)),
)
assert FAMILY_NAMES == tuple(f.name for f in FAMILIES)
BY_NAME = {f.name: f for f in FAMILIES}
# The stages an author-adjudication group may be bound to, in the order groups must appear.
AUTHOR_STAGES = ("pipeline_stage_3", "pipeline_stage_3_prime")


def path_problem(relative: Any) -> str | None:
    """Why `relative` is not a canonical POSIX path under an artifact root, or None."""
    if not isinstance(relative, str) or not relative:
        return "the path must be a non-empty string"
    if len(relative) > MAX_PATH:
        return f"the path is longer than {MAX_PATH} characters"
    if any(ord(c) < 32 or ord(c) == 127 for c in relative):
        return "the path holds a control character"
    if relative.startswith("/") or re.match(r"^[A-Za-z]:", relative) or "\\" in relative:
        return "the path must be relative, with forward slashes"
    if relative.endswith("/") or any(part in ("", ".", "..") for part in relative.split("/")):
        return "the path must not hold empty, '.' or '..' components or end in '/'"
    if PurePosixPath(relative).is_absolute():
        return "the path must be relative"
    return None


def artifact_problems(family: Family, artifact: Any, *, sealed: bool) -> list[str]:
    """What is wrong with one artifact binding, in the closed shape."""
    fields = (*ARTIFACT_FIELDS, "sha256") if sealed else ARTIFACT_FIELDS
    if not isinstance(artifact, dict) or sorted(artifact) != sorted(fields):
        return [f"an artifact has exactly the fields {', '.join(fields)}"]
    out = []
    if not isinstance(artifact["artifact_id"], str) or not re.match(ID_PATTERN, artifact["artifact_id"]):
        out.append(f"artifact id {artifact['artifact_id']!r} must match {ID_PATTERN}")
    if artifact["artifact_role"] not in family.roles:
        out.append(f"role {artifact['artifact_role']!r} is not one of {family.name}'s: {', '.join(family.roles)}")
    if not isinstance(artifact["artifact_group_id"], str) or not re.match(GROUP_PATTERN, artifact["artifact_group_id"]):
        out.append(f"group id {artifact['artifact_group_id']!r} must match {GROUP_PATTERN}")
    stage = artifact["artifact_group_stage"]
    if family.staged and stage not in AUTHOR_STAGES:
        out.append(f"{family.name} groups name their stage: one of {', '.join(AUTHOR_STAGES)}")
    if not family.staged and stage is not None:
        out.append(f"{family.name} artifacts carry no group stage")
    problem = path_problem(artifact["relative_path"])
    if problem:
        out.append(f"relative path {artifact['relative_path']!r}: {problem}")
    if sealed and (not isinstance(artifact["sha256"], str) or not re.match(SHA256_PATTERN, artifact["sha256"])):
        out.append("sha256 must be 64 lowercase hex digits")
    return out


def groups_of(artifacts: list[dict[str, Any]]) -> tuple[list[list[dict[str, Any]]], list[str]]:
    """The artifacts split into their groups (each group contiguous), and what breaks that."""
    groups: list[list[dict[str, Any]]] = []
    problems = []
    for artifact in artifacts:
        gid = artifact.get("artifact_group_id")
        if groups and groups[-1][0].get("artifact_group_id") == gid:
            groups[-1].append(artifact)
        elif any(g[0].get("artifact_group_id") == gid for g in groups):
            problems.append(f"group {gid} is split: a group's artifacts are listed together")
        else:
            groups.append([artifact])
    return groups, problems


def group_problems(family: Family, group: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """A group's roles must follow the family's order, once each (all present when complete),
    and share one stage."""
    gid = group[0].get("artifact_group_id")
    roles = [a.get("artifact_role") for a in group]
    order = [r for r in family.roles if r in roles]
    out = []
    if roles != order or len(set(roles)) != len(roles):
        out.append(f"group {gid}: roles must appear once each, in the order {', '.join(family.roles)}")
    required = [r for r in family.roles if r not in family.optional]
    if complete and not all(r in roles for r in required):
        missing = [r for r in required if r not in roles]
        out.append(f"group {gid} is incomplete: it lacks {', '.join(missing)}")
    if len({a.get("artifact_group_stage") for a in group}) > 1:
        out.append(f"group {gid}: every artifact of a group has the same stage")
    return out


def row_problems(row: Any, family: Family, *, sealed: bool) -> list[str]:
    """Everything wrong with one row: closed fields, capture state against reason and artifacts,
    each artifact, and (when sealed, or `complete` at seal time) whole groups."""
    if not isinstance(row, dict) or sorted(row) != sorted(ROW_FIELDS):
        return [f"a row has exactly the fields {', '.join(ROW_FIELDS)}"]
    if row["source_family"] != family.name:
        return [f"row is {row['source_family']!r}, expected {family.name!r}"]
    state, reason, artifacts = row["capture_state"], row["reason_code"], row["artifacts"]
    if not isinstance(artifacts, list):
        return ["artifacts must be a list"]
    out = []
    if state == CAPTURED:
        if reason is not None or not artifacts:
            out.append("a captured row has artifacts and reason_code null")
    elif state == NOT_APPLICABLE:
        if reason != NOT_APPLICABLE_REASON or artifacts:
            out.append(f"a not_applicable row has reason_code {NOT_APPLICABLE_REASON} and no artifacts")
    elif state == UNAVAILABLE:
        if reason not in UNAVAILABLE_REASONS or artifacts:
            out.append(f"an unavailable row has no artifacts and reason_code one of {', '.join(UNAVAILABLE_REASONS)}")
    else:
        out.append(f"capture_state {state!r} is not one of {CAPTURED}, {NOT_APPLICABLE}, {UNAVAILABLE}")
    if len(artifacts) > MAX_ARTIFACTS_PER_ROW:
        out.append(f"a row holds at most {MAX_ARTIFACTS_PER_ROW} artifacts")
    for artifact in artifacts:
        out += artifact_problems(family, artifact, sealed=sealed)
    if out:
        return out
    ids = [a["artifact_id"] for a in artifacts]
    if len(set(ids)) != len(ids):
        out.append("artifact ids are unique within a row")
    groups, split = groups_of(artifacts)
    out += split
    for group in groups:
        out += group_problems(family, group, complete=sealed)
    if sealed and state == CAPTURED:
        out += _group_count_problems(family, groups)
    elif len(groups) > family.groups[1]:
        out.append(f"{family.name} holds at most {family.groups[1]} group(s)")
    if family.staged:
        stages = [g[0]["artifact_group_stage"] for g in groups]
        if stages != sorted(stages, key=AUTHOR_STAGES.index) or len(set(stages)) != len(stages):
            out.append(f"{family.name} groups have distinct stages in the order {', '.join(AUTHOR_STAGES)}")
    return out


def _group_count_problems(family: Family, groups: list[list[dict[str, Any]]]) -> list[str]:
    low, high = family.groups
    if not low <= len(groups) <= high:
        return [f"a captured {family.name} row holds {low}..{high} group(s), not {len(groups)}"]
    return []


def rows_problems(rows: Any, *, sealed: bool) -> list[str]:
    """All five rows, in the fixed family order; messages name the row."""
    if not isinstance(rows, list) or [r.get("source_family") if isinstance(r, dict) else None
                                      for r in rows] != list(FAMILY_NAMES):
        return [f"exactly {len(FAMILY_NAMES)} rows, in this order: {', '.join(FAMILY_NAMES)}"]
    return [f"{family.name}: {message}" for row, family in zip(rows, FAMILIES, strict=True)
            for message in row_problems(row, family, sealed=sealed)]

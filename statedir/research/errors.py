"""The research ledger's error codes (all under statedir's one root, StatedirError)."""
from __future__ import annotations

from statedir.errors import BAD_INPUT, ENVIRONMENT, StatedirError


class UnknownEntity(StatedirError):
    """A foreign key names a record that does not exist (exit 2)."""

    exit_code = BAD_INPUT


class UnknownProject(UnknownEntity):
    """UNKNOWN_PROJECT (exit 2)."""

    code = "UNKNOWN_PROJECT"


class UnknownQuestion(UnknownEntity):
    """UNKNOWN_QUESTION (exit 2)."""

    code = "UNKNOWN_QUESTION"


class UnknownHypothesis(UnknownEntity):
    """UNKNOWN_HYPOTHESIS (exit 2)."""

    code = "UNKNOWN_HYPOTHESIS"


class UnknownExperiment(UnknownEntity):
    """UNKNOWN_EXPERIMENT (exit 2)."""

    code = "UNKNOWN_EXPERIMENT"


class UnknownResearchRun(UnknownEntity):
    """UNKNOWN_RUN (exit 2): a research run; statedir.errors.UnknownRun, with the same code, is a pipeline run's."""

    code = "UNKNOWN_RUN"


class UnknownSource(UnknownEntity):
    """UNKNOWN_SOURCE (exit 2)."""

    code = "UNKNOWN_SOURCE"


class UnknownEvidence(UnknownEntity):
    """UNKNOWN_EVIDENCE (exit 2)."""

    code = "UNKNOWN_EVIDENCE"


class UnknownResult(UnknownEntity):
    """UNKNOWN_RESULT (exit 2)."""

    code = "UNKNOWN_RESULT"


class UnknownClaim(UnknownEntity):
    """UNKNOWN_CLAIM (exit 2)."""

    code = "UNKNOWN_CLAIM"


# The error for each kind of record a foreign key may name (statedir.research.kinds)
UNKNOWN: dict[str, type[UnknownEntity]] = {
    "project": UnknownProject, "question": UnknownQuestion, "hypothesis": UnknownHypothesis,
    "experiment": UnknownExperiment, "run": UnknownResearchRun, "source": UnknownSource,
    "evidence": UnknownEvidence, "result": UnknownResult, "claim": UnknownClaim,
}


class SchemaVersionMismatch(StatedirError):
    """A research file carries a `schema_version` this code does not understand (exit 3)."""

    code = "SCHEMA_VERSION_MISMATCH"
    exit_code = ENVIRONMENT


class IndexUnavailable(StatedirError):
    """The SQLite index stayed locked by another process past the wait (exit 3)."""

    code = "INDEX_BUSY"
    exit_code = ENVIRONMENT

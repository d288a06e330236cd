"""What `statedir research` hands back (statedir.api.documents' `Document`): research-lab-skills'
`state.py` action, exactly one action flag per call, on the store's research ledger; a refusal
in `state.py`'s flat shape `{"error": "<CODE>", "message": ..., "type": ..., "details": ...}` with
statedir's exit code."""
# Lazy imports: research, research.actions: each method imports what its own call uses, so a call pays for its own
#   path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from statedir.commands.document import Document
from statedir.errors import InvalidValue, StatedirError
from statedir.research.evidence import ARTIFACT_ROLES  # the resolver's roles a Result's artifact lives under

__all__ = ["ARTIFACT_ROLES", "SEED_ERRORS", "flat", "research", "research_on"]

# `state.py`'s exception name for each code: a caller that matched on it still can.
SEED_ERRORS = {"INVALID_VALUE": "ValueError", "INVALID_ID": "ValueError", "LOCK_TIMEOUT": "LockTimeoutError",
               "NOT_A_STORE": "ProjectRootNotFoundError", "BAD_FILE": "StateParseError",
               "SCHEMA_VERSION_MISMATCH": "StateParseError", "UNKNOWN_RUN": "RunNotFoundError",
               "UNKNOWN_PROJECT": "ProjectNotFoundError", "UNKNOWN_QUESTION": "QuestionNotFoundError",
               "UNKNOWN_HYPOTHESIS": "HypothesisNotFoundError", "UNKNOWN_EXPERIMENT": "ExperimentNotFoundError",
               "UNKNOWN_SOURCE": "SourceNotFoundError", "UNKNOWN_EVIDENCE": "EvidenceNotFoundError"}


def actions() -> tuple[str, ...]:
    from statedir.research.actions import ACTIONS

    return ACTIONS


def flat(exc: StatedirError) -> Document:
    """A refusal as `state.py` prints it, with its exit code."""
    return Document({"error": exc.code, "message": exc.message, "type": SEED_ERRORS.get(exc.code, exc.code),
                     "details": exc.details}, exc.exit_code)


def chosen(values: dict[str, Any]) -> str:
    """The one action the flags choose (refused: none, or more than one)."""
    found = [a for a in actions() if values[a.replace("-", "_")]]
    if len(found) != 1:
        raise InvalidValue("give exactly one action flag: " + " ".join(f"--{a}" for a in actions()),
                           given=[f"--{a}" for a in found])
    return found[0]


def _year(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidValue(f"{{opt:year}} must be a whole number, got {text!r}", flag="--year") from None


def research_on(opened: Callable[[], Any], values: dict[str, Any]) -> Document:
    """The action the flags in `values` choose, on the ledger of the store `opened()` opens (after
    the flags are checked); its result, or its refusal in the flat shape."""
    from statedir.research import Ledger
    from statedir.research import actions as actions_mod

    try:
        action = chosen(values)
        if values.get("year") is not None:
            values = {**values, "year": _year(values["year"])}
        sd = opened()
        ledger = Ledger(sd.store, lock_timeout=sd.lock_timeout, actor=values.get("actor"), expect=values.get("expect"))
        return Document(actions_mod.run(ledger, action, values), plain=action == "report")
    except StatedirError as exc:
        return flat(exc)


def research(sd: Any, **values: Any) -> Document:
    return research_on(lambda: sd, values)

"""One exception root with stable codes; the CLI's error handler maps them to exit codes."""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (`statedir --version` loads nothing)
if TYPE_CHECKING:
    from typing import Any

REFUSED, BAD_INPUT, ENVIRONMENT = 1, 2, 3


class StatedirError(Exception):
    """Root of every error statedir reports; `code` is stable, `exit_code` per cli.md."""

    code = "STATEDIR_ERROR"
    exit_code = ENVIRONMENT

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def as_json(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


def _error(code: str, exit_code: int) -> type[StatedirError]:
    return type(code.title().replace("_", "") + "Error", (StatedirError,),
                {"code": code, "exit_code": exit_code, "__doc__": f"{code} (exit {exit_code})."})


# Refused by the rules (exit 1).
IllegalTransition = _error("ILLEGAL_TRANSITION", REFUSED)
PermissionDenied = _error("PERMISSION_DENIED", REFUSED)
PrerequisitesMissing = _error("PREREQUISITES_MISSING", REFUSED)
LimitReached = _error("LIMIT_REACHED", REFUSED)
RunTerminal = _error("RUN_TERMINAL", REFUSED)
ImmutableField = _error("IMMUTABLE_FIELD", REFUSED)
ValidationFailed = _error("VALIDATION_FAILED", REFUSED)
HeadMoved = _error("HEAD_MOVED", REFUSED)  # compare-and-swap: HEAD is not the commit the caller saw
MergeRefused = _error("MERGE_REFUSED", REFUSED)  # sync: the two sides cannot merge into a legal state
UserAnswerRequired = _error("USER_ANSWER_REQUIRED", REFUSED)  # a MANDATORY checkpoint is the user's: ask them
UserDeclined = _error("USER_DECLINED", REFUSED)  # the user declined (or cancelled) the question: nothing changed
ContentChanged = _error("CONTENT_CHANGED", REFUSED)  # a passport's content_hash differs from the file brought
# Bad input (exit 2).
UnknownRun = _error("UNKNOWN_RUN", BAD_INPUT)
UnknownStage = _error("UNKNOWN_STAGE", BAD_INPUT)
UnknownMaterial = _error("UNKNOWN_MATERIAL", BAD_INPUT)
InvalidValue = _error("INVALID_VALUE", BAD_INPUT)
InvalidId = _error("INVALID_ID", BAD_INPUT)
RunExists = _error("RUN_EXISTS", BAD_INPUT)
BadFile = _error("BAD_FILE", BAD_INPUT)


class UnresolvedMerge(BadFile):  # type: ignore[valid-type,misc]
    """UNRESOLVED_MERGE (exit 2): a store file still holds git's conflict markers."""

    code = "UNRESOLVED_MERGE"


# Environment (exit 3).
NotAStore = _error("NOT_A_STORE", ENVIRONMENT)
LockTimeout = _error("LOCK_TIMEOUT", ENVIRONMENT)
GitError = _error("GIT_ERROR", ENVIRONMENT)
CorruptStore = _error("CORRUPT_STORE", ENVIRONMENT)
MissingDependency = _error("MISSING_DEPENDENCY", ENVIRONMENT)  # an optional extra is not installed
WriteFailed = _error("IO_ERROR", ENVIRONMENT)  # disk full, permissions: nothing was changed
UncommittedEdit = _error("UNCOMMITTED_EDIT", ENVIRONMENT)  # a store file differs from HEAD: not ours to commit
SigningKeyMissing = _error("SIGNING_KEY_MISSING", ENVIRONMENT)  # a bound actor's commit needs a key: none is set
SigningKeyMismatch = _error("SIGNING_KEY_MISMATCH", ENVIRONMENT)  # the key set is not one signers.yaml trusts here

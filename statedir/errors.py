"""One exception root with stable codes; the CLI's error handler maps them to exit codes.

A refusal's next step is data (`hint=Hint("doctor", {"fix": True})`), its message a template that
says it through a placeholder (`run `{hint}``): statedir.hints words it for the entry point."""
from __future__ import annotations

from statedir.hints import WORDS, Hint, Words, hints_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (`statedir --version` loads nothing)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["Hint"]  # re-exported: a layer raising a refusal imports both from here

REFUSED, BAD_INPUT, ENVIRONMENT = 1, 2, 3
_ARGS = BaseException.__dict__["args"]  # Exception's own `args`, beneath StatedirError's


class StatedirError(Exception):
    """Root of every error statedir reports; `code` is stable, `exit_code` per cli.md."""

    code = "STATEDIR_ERROR"
    exit_code = ENVIRONMENT
    # Where a transition was refused (statedir.engine.transaction.RefusedAt), for its moves: never serialised.
    _refused_at: Any = None

    def __init__(self, message: str, *, hint: Hint | Iterable[Hint] | None = None, **details: Any) -> None:
        self.template = message  # as the layer wrote it: `{hint}`, `{opt:NAME}` unsaid
        self.hints = hints_of(hint)
        # Worded in the words of where it is made, but only once read: `statedir next` and the flow
        # check are refused hundreds of thousands of times and read none of those messages.
        self._words: Words | None = WORDS.get()
        super().__init__(message)
        self.details = details

    @property
    def message(self) -> str:
        """The message in its entry point's words (those current where the error was made)."""
        if self._words is not None:
            worded, self._words = self._words.fill(self.template, self.hints), None
            _ARGS.__set__(self, (worded, *_ARGS.__get__(self)[1:]))
        return str(_ARGS.__get__(self)[0])

    @property
    def args(self) -> tuple[Any, ...]:  # Exception's own, the message worded
        self.message  # noqa: B018
        return tuple(_ARGS.__get__(self))

    @args.setter
    def args(self, value: tuple[Any, ...]) -> None:
        _ARGS.__set__(self, value)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def reword(self, words: Words) -> None:
        """Say the message again, from its template, in an entry point's `words`."""
        self._words = None
        worded = words.fill(self.template, self.hints)
        self.args = (worded, *self.args[1:])

    def as_json(self) -> dict[str, Any]:
        details = {**self.details, "hints": [h.as_json() for h in self.hints]} if self.hints else self.details
        return {"error": {"code": self.code, "message": self.message, "details": details}}


# Refused by the rules (exit 1).
class IllegalTransition(StatedirError):
    """ILLEGAL_TRANSITION (exit 1)."""

    code = "ILLEGAL_TRANSITION"
    exit_code = REFUSED


class PermissionDenied(StatedirError):
    """PERMISSION_DENIED (exit 1)."""

    code = "PERMISSION_DENIED"
    exit_code = REFUSED


class PrerequisitesMissing(StatedirError):
    """PREREQUISITES_MISSING (exit 1)."""

    code = "PREREQUISITES_MISSING"
    exit_code = REFUSED


class LimitReached(StatedirError):
    """LIMIT_REACHED (exit 1)."""

    code = "LIMIT_REACHED"
    exit_code = REFUSED


class RunTerminal(StatedirError):
    """RUN_TERMINAL (exit 1)."""

    code = "RUN_TERMINAL"
    exit_code = REFUSED


class ImmutableField(StatedirError):
    """IMMUTABLE_FIELD (exit 1)."""

    code = "IMMUTABLE_FIELD"
    exit_code = REFUSED


class ValidationFailed(StatedirError):
    """VALIDATION_FAILED (exit 1)."""

    code = "VALIDATION_FAILED"
    exit_code = REFUSED


class HeadMoved(StatedirError):
    """HEAD_MOVED (exit 1): compare-and-swap: HEAD is not the commit the caller saw."""

    code = "HEAD_MOVED"
    exit_code = REFUSED


class MergeRefused(StatedirError):
    """MERGE_REFUSED (exit 1): sync: the two sides cannot merge into a legal state."""

    code = "MERGE_REFUSED"
    exit_code = REFUSED


class UserAnswerRequired(StatedirError):
    """USER_ANSWER_REQUIRED (exit 1): a MANDATORY checkpoint is the user's: ask them."""

    code = "USER_ANSWER_REQUIRED"
    exit_code = REFUSED


class UserDeclined(StatedirError):
    """USER_DECLINED (exit 1): the user declined (or cancelled) the question: nothing changed."""

    code = "USER_DECLINED"
    exit_code = REFUSED


class FailureModeBlock(StatedirError):
    """FAILURE_MODE_BLOCK (exit 1): a failure-mode checklist blocks the stage (or none is recorded)
    until the user answers each blocking mode."""

    code = "FAILURE_MODE_BLOCK"
    exit_code = REFUSED


class ContentChanged(StatedirError):
    """CONTENT_CHANGED (exit 1): a passport's content_hash differs from the file brought."""

    code = "CONTENT_CHANGED"
    exit_code = REFUSED


class ContractIncomplete(StatedirError):
    """CONTRACT_INCOMPLETE (exit 1): a re-review decision before its contract's passing check."""

    code = "CONTRACT_INCOMPLETE"
    exit_code = REFUSED


# Bad input (exit 2).
class UnknownRun(StatedirError):
    """UNKNOWN_RUN (exit 2)."""

    code = "UNKNOWN_RUN"
    exit_code = BAD_INPUT


class UnknownStage(StatedirError):
    """UNKNOWN_STAGE (exit 2)."""

    code = "UNKNOWN_STAGE"
    exit_code = BAD_INPUT


class UnknownMaterial(StatedirError):
    """UNKNOWN_MATERIAL (exit 2)."""

    code = "UNKNOWN_MATERIAL"
    exit_code = BAD_INPUT


class InvalidValue(StatedirError):
    """INVALID_VALUE (exit 2)."""

    code = "INVALID_VALUE"
    exit_code = BAD_INPUT


class InvalidId(StatedirError):
    """INVALID_ID (exit 2)."""

    code = "INVALID_ID"
    exit_code = BAD_INPUT


class RunExists(StatedirError):
    """RUN_EXISTS (exit 2)."""

    code = "RUN_EXISTS"
    exit_code = BAD_INPUT


class BadFile(StatedirError):
    """BAD_FILE (exit 2)."""

    code = "BAD_FILE"
    exit_code = BAD_INPUT



class UnresolvedMerge(BadFile):
    """UNRESOLVED_MERGE (exit 2): a store file still holds git's conflict markers."""

    code = "UNRESOLVED_MERGE"


# Environment (exit 3).
class NotAStore(StatedirError):
    """NOT_A_STORE (exit 3)."""

    code = "NOT_A_STORE"
    exit_code = ENVIRONMENT


class LockTimeout(StatedirError):
    """LOCK_TIMEOUT (exit 3)."""

    code = "LOCK_TIMEOUT"
    exit_code = ENVIRONMENT


class GitError(StatedirError):
    """GIT_ERROR (exit 3)."""

    code = "GIT_ERROR"
    exit_code = ENVIRONMENT


class CorruptStore(StatedirError):
    """CORRUPT_STORE (exit 3)."""

    code = "CORRUPT_STORE"
    exit_code = ENVIRONMENT


class MissingDependency(StatedirError):
    """MISSING_DEPENDENCY (exit 3): an optional extra is not installed."""

    code = "MISSING_DEPENDENCY"
    exit_code = ENVIRONMENT


class WriteFailed(StatedirError):
    """IO_ERROR (exit 3): disk full, permissions: nothing was changed."""

    code = "IO_ERROR"
    exit_code = ENVIRONMENT


class UncommittedEdit(StatedirError):
    """UNCOMMITTED_EDIT (exit 3): a store file differs from HEAD: not ours to commit."""

    code = "UNCOMMITTED_EDIT"
    exit_code = ENVIRONMENT


class SigningKeyMissing(StatedirError):
    """SIGNING_KEY_MISSING (exit 3): a bound actor's commit needs a key: none is set."""

    code = "SIGNING_KEY_MISSING"
    exit_code = ENVIRONMENT


class SigningKeyMismatch(StatedirError):
    """SIGNING_KEY_MISMATCH (exit 3): the key set is not one signers.yaml trusts here."""

    code = "SIGNING_KEY_MISMATCH"
    exit_code = ENVIRONMENT

"""statedir: pipeline state as a git-friendly directory of YAML files.

    import statedir
    statedir.init("state")           # make the store (git init first where needed); once
    sd = statedir.open("state")      # a StateDir: sd.new, sd.stage, sd.status, sd.validate, ...
"""
# Lazy imports: statedir.api (StateDir, init), statedir.errors (the typed errors): `import statedir` and `statedir
#   --version` load nothing of the API until a caller asks for it (--version, about 20 ms in all, would double), and
#   the CLI's no-op sync answers without the errors module (docs/reliability.md).
# The annotations below are strings: `statedir --version` imports this module and loads nothing
# more (no typing, no pathlib, no api, no errors).
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from statedir.errors import (  # the typed errors, for `except statedir.IllegalTransition:`
        BadFile,
        ContentChanged,
        ContractIncomplete,
        CorruptStore,
        FailureModeBlock,
        GitError,
        HeadMoved,
        IllegalTransition,
        ImmutableField,
        InvalidId,
        InvalidValue,
        LimitReached,
        LockTimeout,
        MergeRefused,
        MissingDependency,
        NotAStore,
        PermissionDenied,
        PrerequisitesMissing,
        RunExists,
        RunTerminal,
        SigningKeyMismatch,
        SigningKeyMissing,
        StatedirError,
        UncommittedEdit,
        UnknownMaterial,
        UnknownRun,
        UnknownStage,
        UnresolvedMerge,
        UserAnswerRequired,
        UserDeclined,
        ValidationFailed,
        WriteFailed,
    )
del TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["__version__", "init", "open", "BadFile", "ContentChanged", "ContractIncomplete", "CorruptStore", "FailureModeBlock", "GitError",
           "HeadMoved", "IllegalTransition",
           "ImmutableField", "InvalidId", "InvalidValue", "LimitReached", "LockTimeout", "MergeRefused",
           "MissingDependency", "NotAStore", "PermissionDenied", "PrerequisitesMissing", "RunExists", "RunTerminal",
           "SigningKeyMismatch", "SigningKeyMissing", "StatedirError", "UncommittedEdit", "UnknownMaterial",
           "UnknownRun", "UnknownStage", "UnresolvedMerge", "UserAnswerRequired", "UserDeclined",
           "ValidationFailed", "WriteFailed"]


def open(path: "str | Path" = "state", *, lock_timeout: "float | None" = None,  # noqa: A001 - mirrors builtins.open
         reset_boundaries: bool = False, actor: "str | None" = None, inprocess_git: bool = False) -> "StateDir":
    """Open the store at `path` for in-process transitions (see statedir.api.StateDir);
    `actor` defaults to STATEDIR_ACTOR. `inprocess_git=True` (for a caller that makes many
    transitions; needs pygit2, in `statedir[mcp]`) builds commits in-process with libgit2: no
    git process per transition, about 0.1 s once to load it."""
    from statedir.api import StateDir

    return StateDir(path, lock_timeout=lock_timeout, reset_boundaries=reset_boundaries, actor=actor,
                    inprocess_git=inprocess_git)


def init(directory: "str | Path" = "state", branch: "str | None" = None,
         new_store: bool = False) -> "dict[str, Any]":
    """Make a store at `directory` and commit it: {store, created, commit[, warnings]}; an
    existing store is left as it is. With `branch`, the store's commits go to that branch of
    its own, checked out at `directory` as a linked work tree (see docs/branch.md); where the
    branch exists already (a clone), it is checked out there again ({..., attached: true}).
    Without `branch`, where a remote branch holds a store, INVALID_VALUE names it (`new_store`: make one anyway)."""
    from statedir.api.making import init as make

    return make(directory, branch, new_store)


def __getattr__(name: str) -> object:
    """The typed errors (statedir.errors, and each of its classes, for `except
    statedir.IllegalTransition:`), loaded when first asked for."""
    if name == "errors" or (name in __all__ and name not in ("__version__", "init", "open")):
        __import__("statedir.errors")  # not `from statedir import errors`: that asks this function again
        errors = globals()["errors"]  # the import system sets the submodule on its package
        value = errors if name == "errors" else getattr(errors, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "errors"})

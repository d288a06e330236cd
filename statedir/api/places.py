"""What an entry point needs of the layers below besides a StateDir: where the store is, how long
to wait for its lock (and what to do meanwhile), a name checked, the merge driver's warning and
the driver itself (what git runs). Each loads its module when called: `statedir --version` and a
plain call load only what they use."""
# Lazy imports: argument_checks, errors, fault_injection, files.schema, gitops.git, gitops.identity, gitops.libgit,
#   gitops.merge_driver_config, gitops.repository_init, merge.driver, store.discovery, store.expectation, store.layout,
#   store.locking, store.store: each method imports what its own call uses, so a call pays for its own path only (every
#   command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def store_at(store: Path | None) -> Path:
    """The store `store` names (a repository root means its state/), else the nearest one at or
    above the current directory, else the repository's store on a branch of its own."""
    from statedir.store import discovery

    return discovery.given_or_nearest(store)


def lock_timeout(raw: str, name: str) -> float:
    """A lock timeout in seconds as `name` gives it (refused: not a number, negative)."""
    from statedir.store.store import check_timeout

    return check_timeout(raw, name)


def on_lock_wait(said: Callable[[float], object]) -> None:
    """Call `said(limit)` when a command starts waiting for the store lock (a person watching)."""
    from statedir.store import locking

    locking.ON_WAIT.set(said)


def checked_name(name: str, what: str) -> str:
    """`name` as git's trailers take it (refused where it is not: an actor's, a client's)."""
    from statedir.gitops.identity import check_name

    return check_name(name, what)


def unregistered(root: Path) -> str | None:
    """The warning that the merge driver is not registered in the repository of the store at
    `root` (None: registered, or in no repository)."""
    from statedir.gitops import git, merge_driver_config

    worktree = git.find_worktree(root)
    return merge_driver_config.warning(root, worktree) if worktree is not None else None


def names_a_file(kind: str, value: str) -> bool:
    """Whether `value`, given where a `kind` goes ("template", "key" or "session"), is a file's path
    rather than a template's name, a public key's text or a session's id."""
    from statedir.argument_checks import names_a_file as rule

    return rule(kind, value)


def checked_run_id(run_id: str) -> str:
    """`run_id`, refused (INVALID_ID) where it is not one a run may have."""
    from statedir.store import layout

    return layout.check_run_id(run_id)


def client_label(name: object, version: object) -> str:
    """An MCP client's `clientInfo` as one line of its commits' Statedir-Client trailer."""
    from statedir.gitops import identity

    return identity.client_label(name, version)


def schema(name: str) -> dict[str, Any]:
    """One of statedir's JSON Schemas (schemas/NAME.schema.json), as loaded."""
    from statedir.files import schema as schema_mod

    return schema_mod.load_schema(name)


CONFIG = "statedir.yaml"  # a store's configuration file (statedir.store.layout.CONFIG)
CLIENT = "Statedir-Client"  # the trailer naming the MCP client that made a commit (statedir.gitops.identity.CLIENT)


def head_at(worktree: Path) -> str | None:
    """The commit HEAD names in the work tree at `worktree` (None: none yet)."""
    from statedir.gitops import git

    return git.head(worktree)


def worktree_of(path: Path) -> Path | None:
    """The git work tree `path` is in (None: in none)."""
    from statedir.gitops import git

    return git.find_worktree(path)


def in_process_git(sd: Any) -> None:
    """Make `sd`'s commits in-process with libgit2, where it is there and can open the repository
    (without pygit2, or in a SHA-256 repository, they go through git)."""
    from statedir.errors import GitError, InvalidValue
    from statedir.gitops.libgit import LibgitBackend

    try:
        sd.store.objects = LibgitBackend(sd.store.worktree)
    except (InvalidValue, GitError):
        pass


def expect_unchanged(store: Any, rev: str, scope: str) -> None:
    """HEAD_MOVED unless the store's `scope` (a store-relative folder or file) is as it was in `rev`."""
    from statedir.store import expectation

    expectation.check(store, rev, scope)


def fingerprint(store: Any, scope: str, head: str) -> str | None:
    """The object id of the store's `scope` at commit `head`: it changes exactly when a write
    expecting `head` would be refused."""
    from statedir.store import expectation

    return expectation.fingerprint(store, scope, head)


def merge_driver(base: str, ours: str, theirs: str, path: str) -> int:
    """The merge driver git runs for store files: 0, or 1 on a refusal."""
    from statedir.merge import driver

    return driver.run(base, ours, theirs, path)


def git_init(directory: Path) -> None:
    """`git init` in `directory` (the demo's throwaway repository)."""
    from statedir.gitops import repository_init

    repository_init.init(directory)


def arm_faults(spec: str) -> None:
    """Arm the fault-injection points `spec` names (STATEDIR_FAULT: the crash tests')."""
    from statedir import fault_injection

    fault_injection.arm(spec)

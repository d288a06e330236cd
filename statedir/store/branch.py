"""A store on a branch of its own (`statedir init DIR --branch NAME`): the store's commits go to
NAME, checked out in a linked work tree at DIR that the user's work tree ignores (its
`info/exclude`, never a committed file); the repository's config records where it is, so
discovery finds it from anywhere in the user's work trees. The user's branch, index and work
tree are never touched: NAME starts as an orphan branch holding only the store. What such a store
can lack later, doctor finds with statedir.store.branch_checks.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.errors import InvalidValue
from statedir.gitops import git, hooks, merge_driver_config, repository_init, worktrees
from statedir.hints import HINT, Hint
from statedir.store import layout
from statedir.store.skeleton import populate, refuse_occupied

# Checks what an attach takes from a remote (statedir.sync.attach.vet, given by the entry points: the
# store layer knows no history): raises, naming what does not verify, and the attach is undone.
Vet = Callable[[Path], None]


def init(directory: Path, branch: str, vet: Vet | None = None) -> dict[str, Any]:
    """Make (or check out again) the store on `branch` at `directory`: {store, branch, created,
    attached, commit[, warnings]}. A store already there on that branch changes nothing. A branch
    checked out again is first put to `vet` (what it holds from a remote is verified); its refusal
    leaves everything as it was. Either way the store's work tree gets statedir's own hooks."""
    user_tree = git.find_worktree(directory.parent)
    if not worktrees.valid_branch_name(user_tree or Path(directory.anchor), branch):
        raise InvalidValue(f"{branch!r} is not a valid branch name", branch=branch)
    if user_tree is not None and worktrees.current_branch(user_tree) == branch:
        raise InvalidValue(f"{branch} is the branch you work on; the store's branch must be another one, "
                           "so that its commits stay out of yours", branch=branch)
    bound = worktrees.binding(user_tree) if user_tree is not None else None
    if bound is not None and bound[0] != branch:
        raise InvalidValue(f"this repository's store is already on branch {bound[0]} (at {bound[1]}); one "
                           f"repository, one store: run `{HINT}`, or to move to "
                           f"another branch, first `git config --unset {worktrees.BRANCH_KEY}` and "
                           f"`git config --unset {worktrees.STORE_KEY}`", branch=branch, bound=bound[0],
                           store=str(bound[1]), hint=Hint("init", {"branch": bound[0]}))
    if (directory / layout.CONFIG).is_file():
        return _existing(directory, branch)
    ran_git_init = user_tree is None
    if user_tree is None:
        refuse_occupied(directory)
        repository_init.init(directory.parent)
        user_tree = directory.parent
    where = worktrees.checked_out(user_tree).get(branch)
    if where is not None and (where / layout.CONFIG).is_file():  # attached already, elsewhere: that is the store
        return _existing(where, branch)
    if where is not None and where.exists():
        raise InvalidValue(f"branch {branch} is checked out at {where} and holds no statedir store; "
                           "choose another name", branch=branch)
    refuse_occupied(directory)
    local = worktrees.commit_of(user_tree, f"refs/heads/{branch}")
    remote = None if local else next(iter(worktrees.remote_branches(user_tree, branch)), None)
    fetched: str | None = None
    warnings: list[str] = []
    if local is None and remote is None:  # a clone made before NAME was pushed, or never fetched since
        fetched, warnings = worktrees.fetch_remote_branch(worktrees.main_worktree(user_tree), branch)
        remote = fetched
    source = local or remote
    if source is not None and not worktrees.holds_file(user_tree, source, layout.CONFIG):
        if fetched is not None:
            worktrees.forget(user_tree, f"refs/remotes/{fetched}")
        raise InvalidValue(f"branch {remote or branch} exists and holds no statedir store at its root; "
                           "choose another name", branch=branch)
    existed = directory.exists()
    if where is not None:
        worktrees.prune(user_tree)  # its work tree was deleted: git still counts it checked out
    try:
        if source is None:
            worktrees.add_orphan(user_tree, directory, branch)
            result = {**populate(directory, created=False), "attached": False}
        else:
            worktrees.add_existing(user_tree, directory, branch, remote)  # git runs no hook of its own here
            if vet is not None:
                vet(directory)
            merge_driver_config.register(directory)  # a fresh clone has no registration (git copies no config)
            result = {"store": str(directory), "created": False, "attached": True, "commit": git.head(directory)}
        hooks.install(directory)
        worktrees.bind(user_tree, directory, branch)
        worktrees.exclude(user_tree, directory)
    except BaseException:
        worktrees.remove(user_tree, directory)
        if local is None and source is not None:  # the local branch add_existing made from the remote's
            worktrees.forget(user_tree, f"refs/heads/{branch}")
            git.run(user_tree, "config", "--remove-section", f"branch.{branch}", check=False)
        if fetched is not None:
            worktrees.forget(user_tree, f"refs/remotes/{fetched}")
        if existed:
            directory.mkdir(parents=True, exist_ok=True)
        raise
    result["branch"] = branch
    if ran_git_init:
        result["git_init"] = str(user_tree)
    if warnings:
        result["warnings"] = [*result.get("warnings", []), *warnings]
    return result


def _existing(directory: Path, branch: str) -> dict[str, Any]:
    """A store already at `directory`: fine where it is `branch`'s linked work tree (its binding
    written again where it went missing), refused where its commits go anywhere else."""
    tree = git.find_worktree(directory)
    on = worktrees.current_branch(tree) if tree is not None else None
    if tree != directory or on != branch:
        where = f"on branch {on}" if on else "on a detached HEAD"
        raise InvalidValue(f"{directory} is already a statedir store whose commits go {where}, not to a branch "
                           f"{branch} of its own; see docs/branch.md to move a store to a branch of its own",
                           store=str(directory), branch=branch)
    repaired = []  # said, never done quietly: "nothing changed" is true where this stays empty
    if worktrees.binding(directory) != (branch, directory):
        worktrees.bind(directory, directory, branch)
        repaired.append(f"recorded the store in the repository's config "
                        f"({worktrees.BRANCH_KEY}, {worktrees.STORE_KEY})")
    outer = git.find_worktree(directory.parent)
    if outer is not None and worktrees.exclude(outer, directory):
        repaired.append("listed its work tree in .git/info/exclude")
    if hooks.install(directory):
        repaired.append("made statedir's own hooks the hooks of its work tree (and of no other)")
    return {"store": str(directory), "branch": branch, "created": False, "attached": False, "commit": None,
            "repaired": repaired}

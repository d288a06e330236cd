"""Finding a store: the nearest one at or above a path, and why a path is no store."""
from __future__ import annotations

from pathlib import Path

from statedir.errors import NotAStore
from statedir.gitops import git, worktrees
from statedir.hints import HINT, Hint, opt
from statedir.store.layout import CONFIG


def stores_below(root: Path, depth: int = 3, most: int = 3) -> list[Path]:
    """Stores in the folders below `root`, nearest first (at most `depth` levels down, hidden
    folders and other stores' insides skipped): what a repository root given as --store means."""
    found: list[Path] = []
    level = [root] if root.is_dir() else []
    budget = 2000  # folders looked into: an error message never walks a whole monorepo
    for _ in range(depth):
        following = []
        for folder in level[:budget]:
            budget -= 1
            try:
                children = sorted(c for c in folder.iterdir() if c.is_dir() and not c.name.startswith(".")
                                  and not c.is_symlink())
            except OSError:
                continue
            for child in children:
                if (child / CONFIG).is_file():
                    found.append(child)
                else:
                    following.append(child)
        if len(found) >= most:
            break
        level = following
    return found[:most]


def not_a_store(root: Path) -> NotAStore:
    """Why `root` is no store, and the likeliest fix: a store below it, or one above, or init."""
    below = stores_below(root)
    if below:
        return NotAStore(f"{root} is not a statedir store (no {CONFIG}), but {', '.join(map(str, below))} is: "
                         f"pass that as {opt('store')} (STATEDIR_STORE)", store=str(root))
    try:
        parent = root.resolve().parent  # a relative path walks up from where it resolves
        above = locate(parent) if parent != root.resolve() else None
    except NotAStore:
        above = None
    if above is not None:
        return NotAStore(f"{root} is not a statedir store (no {CONFIG}); the nearest store above it is {above}",
                         store=str(root))
    return NotAStore(f"{root} is not a statedir store (no {CONFIG}); run `{HINT}` to make one", store=str(root),
                     hint=Hint("init", {"directory": str(root)}))


def locate(start: Path) -> Path:
    """The nearest `state/statedir.yaml` at or above `start` (the default store), else the store
    on a branch of its own that the repository's config names (`statedir init --branch`)."""
    for directory in (start, *start.parents):
        if (directory / "state" / CONFIG).is_file():
            return directory / "state"
        if (directory / CONFIG).is_file():
            return directory
    bound = _bound(start)
    if bound is not None:
        return bound
    below = stores_below(start)
    if below:  # a store in a folder below (a repository's pipeline/state): name it, never suggest a second
        listed = ", ".join(map(str, below))
        named = f"{listed} is one: pass it" if len(below) == 1 else f"these are: {listed}; pass one"
        raise NotAStore(f"no statedir store at or above {start}, but {named} as {opt('store')} (or STATEDIR_STORE), or run "
                        "the command inside it", below=list(map(str, below)))
    pushed = _remote_stores(start)
    if pushed:  # a fresh clone of a repository whose store is on a branch of its own: never a second store
        named = " or ".join(f"`{{hint:{n}}}`" for n in range(1, len(pushed[:3]) + 1))
        raise NotAStore(f"no statedir store at or above {start}; this repository's store is on branch "
                        f"{pushed[0]} (a remote holds it): run {named} to check it out here",
                        branches=pushed[:3], hint=[Hint("init", {"branch": name}) for name in pushed[:3]])
    raise NotAStore(f"no statedir store at or above {start}; run `{HINT}` or pass {opt('store')}", hint=Hint("init"))


def _remote_stores(start: Path) -> list[str]:
    """The store branches the remotes of the repository holding `start` have (only on the error path)."""
    tree = git.find_worktree(start)
    return worktrees.remote_stores(tree, CONFIG) if tree is not None else []


def given_or_nearest(store: Path | None) -> Path:
    """--store / STATEDIR_STORE, else the nearest store at or above the current directory. A
    given path that is no store but holds `state/statedir.yaml` (a repository root) means that."""
    if store is None:
        return locate(Path.cwd())
    if not (store / CONFIG).is_file() and (store / "state" / CONFIG).is_file():
        return store / "state"
    return store


def _bound(start: Path) -> Path | None:
    """The store the repository holding `start` keeps on a branch of its own; NotAStore where its
    linked work tree is gone (deleted, or a clone that has not checked it out yet)."""
    tree = git.find_worktree(start)
    if tree is None:
        return None
    found = worktrees.binding(tree)
    if found is None:
        return None
    branch, where = found
    if (where / CONFIG).is_file():
        return where
    raise NotAStore(f"this repository keeps its statedir store on branch {branch}, but no work tree of it is at "
                    f"{where}; run `{HINT}` to check it out again",
                    store=str(where), branch=branch, hint=Hint("init", {"directory": str(where), "branch": branch}))

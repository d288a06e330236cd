"""doctor's checks of a store on a branch of its own (statedir.store.branch): the binding discovery
reads, the user's `info/exclude` line and statedir's own hooks in the store's work tree, each with
its repair. Nothing here makes a repository (no GitPython)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from statedir.gitops import git, hooks, worktrees


def problems(root: Path) -> list[tuple[str, str, str, Callable[[], None]]]:
    """What a store on a branch of its own (a linked work tree at the store's root, inside the
    user's work tree) lacks, as (kind, message, what the fix does, the fix): the binding discovery
    reads, and the `info/exclude` line that keeps the user's `git add -A` from adding it."""
    if not (root / ".git").is_file():  # the common case, answered without a walk or a git process
        return []
    outer = git.find_worktree(root.parent)
    if outer is None:
        return []
    branch = worktrees.current_branch(root)
    bound = worktrees.binding(root)
    if branch is None or (bound is not None and bound[0] != branch):
        return []  # not one made by init --branch, or the repository binds another: not ours to change
    out: list[tuple[str, str, str, Callable[[], None]]] = []
    if bound is None or bound[1].resolve() != root:
        out.append(("branch_binding", f"the repository's config does not name this store (on branch {branch}): "
                    "commands outside ./state may not find it", f"git config {worktrees.BRANCH_KEY} {branch}; "
                    f"git config {worktrees.STORE_KEY} <this store>", lambda: worktrees.bind(root, root, branch)))
    ignored = git.run(outer, "check-ignore", "-q", "--no-index", "--", root.relative_to(outer).as_posix() + "/",
                      check=False).returncode == 0
    if not ignored:
        def exclude() -> None:
            worktrees.exclude(outer, root)

        out.append(("branch_exclude", f"your work tree {outer} does not ignore the store's work tree: `git add -A` "
                    "would commit it into your branch as an embedded repository",
                    "list it in .git/info/exclude", exclude))
    if not hooks.installed(root):
        def install() -> None:
            hooks.install(root)

        out.append(("store_hooks", "the store's work tree runs the repository's hooks, not statedir's own: a hook "
                    "configuration its branch carries (a .pre-commit-config.yaml a remote changed) could run there",
                    "make statedir's own hooks the hooks of the store's work tree alone", install))
    return out

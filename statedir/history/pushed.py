"""What a push sends of the store, as git's pre-push hook (through the pre-commit framework)
describes it: whether the store's commits are among them, and after which commit they start."""
from __future__ import annotations

from statedir.gitops import git, worktrees
from statedir.store.store import Store


def scope(store: Store, local_ref: str | None, from_ref: str | None, to_ref: str | None) -> tuple[bool, str | None]:
    """(whether to verify, since which commit). A store on the user's branch may be in any push:
    always verified. A store on a branch of its own (`init --branch`) only where the push sends
    that branch (or a commit of it); the rest of its history is on the remote already."""
    bound = worktrees.binding(store.worktree)
    since = from_ref if from_ref and worktrees.commit_of(store.worktree, from_ref) else None
    if bound is None:
        return True, since
    branch = bound[0]
    if local_ref == f"refs/heads/{branch}":
        return True, since
    if local_ref and local_ref.startswith("refs/"):
        return False, None  # another branch or a tag: the store's branch shares no history with it
    if to_ref:  # `git push origin HEAD:NAME` and the like name no branch: the commit says whose it is
        held = git.run(store.worktree, "merge-base", "--is-ancestor", to_ref, f"refs/heads/{branch}", check=False)
        return held.returncode == 0, since
    return True, since

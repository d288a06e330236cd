"""`statedir sync`: fetch, merge (never rebase), validate and verify, push — under the store lock,
which statedir.sync.entry takes (and answers a sync where nothing moved without this module).

A merge the driver refuses, or one whose result is not a legal store, is refused with a conflict
report; on any failure (a rejected push after a first merge too) the branch, the index and the
work tree are put back as they were when sync started (`statedir.store.sync_start`).
"""
from __future__ import annotations

import subprocess
from typing import Any

from statedir.engine import validate
from statedir.errors import GitError, MergeRefused, UncommittedEdit
from statedir.gitops import commit_message, git, hooks, merge_driver_config, worktrees
from statedir.hints import HINT, SYNC_REPLAY, Hint
from statedir.research import Ledger, arrival
from statedir.store import sync_journal, sync_start
from statedir.store.store import Store
from statedir.sync import conflicts as conflicts_mod
from statedir.sync import refusal, verified, versions
from statedir.sync import replay as replaying
from statedir.sync.remote import remote_dir, result

RETRIES = 5  # pushes rejected because the remote moved meanwhile


def _git(store: Store, *args: str, check: bool = True) -> Any:
    return git.run(store.worktree, *args, check=check)


def _out(store: Store, *args: str) -> str:
    return _git(store, *args).stdout.decode().strip()


def _rev(store: Store, ref: str) -> str | None:
    proc = _git(store, "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def _dirty_store(store: Store) -> list[str]:
    out = _git(store, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--", store.git_path("."))
    return [entry[3:] for entry in out.stdout.decode("utf-8", "surrogateescape").split("\0") if len(entry) > 3]



def exchange(store: Store, name: str, branch: str, url: str, *, actor: str, replay: bool) -> dict[str, Any]:
    """The whole sync under the store lock (statedir.sync.entry holds it), where the remote's
    branch or this one moved: the work tree checked, a checkpoint taken, the exchange made, and
    on a refusal or failure everything put back (or, with `replay`, the refused merge replayed)."""
    dirty = _dirty_store(store)
    if dirty:
        raise UncommittedEdit(f"store files differ from HEAD ({', '.join(dirty[:3])}); commit them with a "
                              f"transition or restore them (`{HINT}`) before sync", hint=Hint("doctor"),
                              files=dirty)
    start = sync_start.take(store)
    sync_journal.record(store, start, "sync")  # a kill from here on is put back by the next command
    try:
        done = _exchange(store, name, branch, url, actor)
    except MergeRefused as refusal:
        _undo(store, start, refusal, final=not replay or bool(refusal.details.get("findings")))
        if not replay or refusal.details.get("findings"):  # the remote's own history is not legal
            raise
        refused = refusal
    except BaseException as failure:  # a refusal, a rejected push, an interrupt: put everything back
        _undo(store, start, failure)
        raise
    else:
        sync_journal.clear(store)
        return done
    try:
        outcome = replaying.replay(store, name, branch, refused, start)
        sync_journal.record(store, start, "pushing", kept=outcome["kept"], replayed=git.head(store.worktree))
        done = _publish(store, name, branch, outcome)
    except BaseException as failure:  # the replay undone whole: the originals are the branch again
        _undo(store, start, failure)
        raise
    sync_journal.clear(store)
    return done


def _undo(store: Store, start: sync_start.SyncStart, failure: BaseException, *, final: bool = True) -> None:
    """Put the branch, index and work tree back where the sync started, then drop the replay's ref
    of the originals (they are the branch again) and, when `final`, the sync's record. If putting
    back fails, both stay for the next command to finish."""
    entry = sync_journal.recorded(store)
    sync_start.put_back(store, start, failure)
    if entry and entry.get("kept"):
        replaying.forget(store, entry["kept"])
    if final:
        sync_journal.clear(store)


def _publish(store: Store, name: str, branch: str, outcome: dict[str, Any]) -> dict[str, Any]:
    """Push the replayed branch; a remote that moved meanwhile undoes the replay (run it again)."""
    head = _rev(store, "HEAD")
    push = _git(store, "-c", f"core.hooksPath={_hooks(store)}", "push", "--porcelain", name,
                f"HEAD:refs/heads/{branch}", check=False)
    if push.returncode != 0:
        raise refusal.push_failed(name, push, f"nothing was changed (where the remote moved meanwhile: run "
                                             f"`{HINT}` again)", SYNC_REPLAY)
    verified.record(store, head)
    counts = f"{len(outcome['replayed'])} replayed, {len(outcome['refused'])} refused by the rules, " \
             f"{len(outcome['skipped'])} skipped"
    return {**result(name, branch, "replayed", head, 1, pushed=True),
            "summary": f"replayed this branch's unpublished transitions onto {name}/{branch} and pushed "
                       f"({counts}); the originals are kept under {outcome['kept']}", **outcome}


def _exchange(store: Store, name: str, branch: str, url: str, actor: str) -> dict[str, Any]:
    """Fetch, merge and push until the push lands (or the remote kept moving)."""
    status = "up_to_date"
    _fetch(store, name, url)
    for attempt in range(1, RETRIES + 1):
        theirs = _rev(store, f"refs/remotes/{name}/{branch}")
        ours = _rev(store, "HEAD")
        if theirs is not None and theirs != ours:
            status = _merge(store, name, branch, ours, theirs, actor) or status
        if status == "up_to_date":  # nothing merged: what a plain `git pull` took since the last check
            verified.refuse_taken(store, name, branch, verified.taken(store, ours, theirs))
        head = _rev(store, "HEAD")
        if head is None or head == theirs:
            verified.record(store, head)
            return result(name, branch, status, head, attempt, pushed=False)
        local = _out(store, "symbolic-ref", "HEAD")  # named, not HEAD: git may run in another work tree
        # the user's pre-push hooks run, as on git push
        push = git.run(remote_dir(store, name, url), "-c", f"core.hooksPath={_hooks(store)}", "push", "--porcelain",
                       name, f"{local}:refs/heads/{branch}", check=False)
        if push.returncode == 0:
            verified.record(store, head)
            return result(name, branch, "pushed" if status == "up_to_date" else status, head, attempt,
                           pushed=True)
        _fetch(store, name, url)  # the remote moved meanwhile: merge again
        if _rev(store, f"refs/remotes/{name}/{branch}") == theirs:  # refused for another reason than a move
            raise refusal.push_failed(name, push, "nothing was changed")
    raise GitError(f"{name} kept moving: the push was rejected {RETRIES} times; nothing was changed, "
                   "run sync again", remote=name)


def _hooks(store: Store) -> str:
    """The hooks a push runs: for a store on a branch of its own, statedir's own (its pre-push
    verify; statedir.gitops.hooks), never the repository's, which could read a configuration the
    branch carries; for a store on your branch, the repository's own, as on your `git push`
    (statedir's other git calls run without hooks)."""
    bound = worktrees.binding(store.worktree)
    if bound is not None and bound[1].resolve() == store.worktree.resolve():
        return str(hooks.write(store.worktree)[0])

    proc = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-path", "hooks"], cwd=store.worktree,
                          capture_output=True, env=git.environment(None), check=False)
    return proc.stdout.decode().strip() or "/dev/null"


def _fetch(store: Store, name: str, url: str) -> None:
    proc = git.run(remote_dir(store, name, url), "fetch", "--quiet", name, check=False)
    if proc.returncode != 0:
        raise GitError(f"git fetch {name} failed: {git.gist(proc.stderr)}", remote=name)


def _merge(store: Store, name: str, branch: str, ours: str | None, theirs: str, actor: str) -> str | None:
    """Bring `theirs` in: None when HEAD already has it, else fast_forward or merged."""
    if ours is not None and _git(store, "merge-base", "--is-ancestor", theirs, ours, check=False).returncode == 0:
        return None
    fast = ours is None or _git(store, "merge-base", "--is-ancestor", ours, theirs, check=False).returncode == 0
    if not fast:
        _nothing_staged(store, name, branch)
    message = commit_message.message(f"sync: merge {name}/{branch}", "-", actor, "sync")
    # An ignored file in the way is refused like an untracked one: undoing the merge would delete it.
    args = ["merge", "--no-overwrite-ignore", *(["--ff-only"] if fast else ["--no-ff", "--no-commit"])]
    # This very statedir merges, registered in the repository's config or not (a fresh clone).
    driver_config = ("-c", f"merge.{merge_driver_config.DRIVER}.name={merge_driver_config.NAME}",
                     "-c", f"merge.{merge_driver_config.DRIVER}.driver={merge_driver_config.command()}")
    proc = _git(store, *driver_config, *args, theirs, check=False)
    # versions registered on both sides: git cannot rename a passport, sync numbers them apart
    if proc.returncode != 0 and not (not fast and versions.settle(store, ours, theirs)):  # sync() puts back
        conflicts = conflicts_mod.unmerged(store)
        if not conflicts and b"unrelated histories" in proc.stderr:
            raise GitError(f"{name}/{branch} shares no history with this store: two stores were made apart (an "
                           "`init` on each machine before either pushed). Keep one; to take the remote's, see "
                           "docs/branch.md; nothing was changed", remote=name, branch=branch)
        if not conflicts:
            raise UncommittedEdit(f"git cannot merge {name}/{branch} into this work tree: {_reason(proc.stderr)}. "
                                  "Commit or stash those changes first; nothing was changed", remote=name)
        raise MergeRefused(conflicts_mod.headline(conflicts), hint=conflicts_mod.next_hints(conflicts),
                           conflicts=conflicts)
    problems = _problems(store, ours)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise MergeRefused(f"the merge of {name}/{branch} is not a legal store: {problems[0]}{more}; "
                           f"nothing was changed. {conflicts_mod.next_steps([])}",
                           hint=conflicts_mod.next_hints([]), conflicts=[], problems=problems)
    if not fast:
        _git(store, "commit", "--quiet", "--no-edit", "-m", message)
    verified.refuse_taken(store, name, branch, verified.taken(store, ours, theirs))
    _record_aliases(store, name, branch, ours, theirs, actor)
    return "fast_forward" if fast else "merged"




def _record_aliases(store: Store, name: str, branch: str, ours: str | None, theirs: str, actor: str) -> None:
    """Sources the merge brought that name a document this branch registered too (the same DOI
    or URL on two machines): each later one recorded as the earlier's alias, one commit. The
    order is history's (statedir.research.arrival), this clone's shared Sources first; a remote
    that made one of them an alias of a Source it brings is refused."""
    if ours is None:
        return
    sources = store.git_path("research/sources")
    if not _git(store, "diff", "--name-only", ours, "HEAD", "--", sources).stdout.strip():
        return
    held = arrival.shared_first(store, ours, theirs)
    overruled = arrival.overruled(store, ours, held[0])
    if overruled:
        raise MergeRefused(f"history from {name}/{branch} does not verify: {overruled[0]['message']} "
                           f"(commit {str(overruled[0]['commit'])[:10]}); nothing was changed",
                           conflicts=[], findings=overruled)
    if _git(store, "diff", "--name-only", "--diff-filter=A", ours, "HEAD", "--", sources).stdout.strip():
        Ledger(store, actor=actor).record_aliases(held=held)


def _nothing_staged(store: Store, name: str, branch: str) -> None:
    """git makes a merge commit only from an index that matches HEAD (a fast-forward keeps
    what is staged)."""
    staged = _git(store, "diff-index", "--cached", "--name-only", "-z", "HEAD").stdout
    files = [f for f in staged.decode("utf-8", "surrogateescape").split("\0") if f]
    if files:
        raise UncommittedEdit(f"{name}/{branch} and this branch both have new commits, and git merges them only "
                              f"with nothing staged; staged: {', '.join(files[:3])}"
                              + (f" and {len(files) - 3} more" if len(files) > 3 else "")
                              + ". Commit them or `git stash` them, then sync again; nothing was changed",
                              remote=name, files=files)


def _reason(stderr: bytes) -> str:
    """git's reason, with the files it lists under it (indented lines) named."""
    files = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line[:1].isspace()]
    more = f" and {len(files) - 3} more" if len(files) > 3 else ""
    return git.gist(stderr).rstrip(":.") + (f": {', '.join(files[:3])}{more}" if files else "")


def _problems(store: Store, ours: str | None) -> list[str]:
    """What validate finds in the files the merge changed (and the runs they belong to): the
    rest of the store is as this branch had it."""
    if ours is None:
        return [str(p) for p in validate.opened_store(store)]
    out = _git(store, "diff", "--cached", "--name-only", "--no-renames", "-z", ours, "--", store.git_path("."))
    prefix = "" if store.prefix == "." else store.prefix + "/"
    rels = [n[len(prefix):] for n in out.stdout.decode("utf-8", "surrogateescape").split("\0")
            if n.startswith(prefix) and n.endswith(".yaml")]
    return [str(p) for p in validate.opened_store(store, rels)]

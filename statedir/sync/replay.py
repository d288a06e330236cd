"""`statedir sync --replay`: where the state merge is refused, this machine's unpublished
transitions are decided again, oldest first, from their recorded requests, on top of the
remote's state, each a new commit naming its original (`Statedir-Replayed-From`); what the rules
now refuse is reported and not applied. The originals stay under `refs/statedir/replayed/`.

The caller (`exchange.sync`) holds the store lock and puts the branch, index and work tree back
where they were if anything here fails, this ref included. The ref is written, and the replay
recorded in the sync's journal (statedir.store.sync_start), before the branch moves: a replay
killed at any moment is put back by the next command, the originals on the branch again.
"""
from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from statedir import fault_injection
from statedir.bus import Bus, session
from statedir.bus import replay as bus_replay
from statedir.engine import run_creation, transaction, validate
from statedir.engine import template as template_mod
from statedir.engine.rules import decision
from statedir.engine.transition_data import Request
from statedir.errors import ENVIRONMENT, GitError, MergeRefused, StatedirError
from statedir.gitops import git, objects
from statedir.hints import opt
from statedir.history import rollback
from statedir.history.verify import commits, verify
from statedir.store import sync_journal, sync_start
from statedir.store.recorded import Commit
from statedir.store.store import Store

TRAILER = "Statedir-Replayed-From"
REFS = "refs/statedir/replayed/"


def unpublished(store: Store, ours: str, theirs: str) -> list[Commit]:
    """The store's commits reachable from `ours` and not from `theirs`, oldest first; refused
    where one of them changes files outside the store (replay rewrites the store's history only)."""
    out = git.run(store.worktree, "log", "--format=", "--name-only", "-z", f"{theirs}..{ours}").stdout
    prefix = "" if store.prefix == "." else store.prefix + "/"
    outside = sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0")
                      if p.strip() and not p.strip().startswith(prefix)})
    if outside:
        raise MergeRefused(f"sync {opt('replay')} re-applies the store's transitions only, and this branch's "
                           f"unpublished commits also change {', '.join(outside[:3])}"
                           + (f" and {len(outside) - 3} more" if len(outside) > 3 else "")
                           + "; merge them with git; nothing was changed", outside=outside)
    return commits(store, store.git_path("."), theirs)


def replay(store: Store, name: str, branch: str, refused: MergeRefused,
           start: sync_start.SyncStart) -> dict[str, Any]:
    """Move the branch to the remote's commit and decide each unpublished transition again on it;
    {replayed, refused, skipped, kept}: the pushing is the caller's. A refusal by the rules (or of
    the request's input) is reported; a failure of the environment (git, the disk) surfaces."""
    ours = git.head(store.worktree)
    theirs = _rev(store, f"refs/remotes/{name}/{branch}")
    if ours is None or theirs is None:
        raise refused
    todo = unpublished(store, ours, theirs)
    if not any(_replayable(c) for c in todo):
        raise MergeRefused(f"the merge of {name}/{branch} is refused and there is nothing to replay: none of "
                           f"this branch's {len(todo)} unpublished store commit(s) records a request statedir can "
                           "decide again (hand edits?); merge them by hand with git; nothing was changed",
                           **refused.details, skipped=[_skip(c) for c in todo])
    kept = f"{REFS}{branch}/{_stamp()}-{ours[:12]}"  # the originals, named before anything moves
    git.run(store.worktree, "update-ref", "-m", "statedir sync --replay: the originals", kept, ours, "")
    sync_journal.record(store, start, "replaying", kept=kept)
    fault_injection.point("replay_moving")
    git.run(store.worktree, "update-index", "-q", "--refresh", check=False)  # stat data only: a restore rewrote files
    git.run(store.worktree, "read-tree", "-m", "-u", ours, theirs)  # as `git checkout` would: keeps what is staged
    git.run(store.worktree, "update-ref", "-m", f"statedir sync --replay: onto {name}/{branch}", "HEAD", theirs, ours)
    _require_legal(store, name, branch, ours)
    done: list[dict[str, Any]] = []
    not_applied: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for commit in todo:
        apply = _replayable(commit)
        if apply is None:
            skipped.append(_skip(commit))
            continue
        before = store.trailers  # (a served store's Statedir-Client stays on what it commits)
        store.trailers = {**before, TRAILER: commit.sha}
        try:
            result = apply(store, commit)
        except StatedirError as exc:
            if exc.exit_code == ENVIRONMENT:  # not the rules' answer: the whole replay is undone
                raise
            not_applied.append({"commit": commit.sha, "run": commit.run_id, "action": commit.action,
                                "code": exc.code, "message": exc.message})
            continue
        finally:
            store.trailers = before
        done.append({"from": commit.sha, "commit": result.get("commit"), "run": commit.run_id,
                     "action": commit.action, "summary": result.get("summary")})
    return {"replayed": done, "refused": not_applied, "skipped": skipped, "kept": kept, "original": ours,
            "onto": theirs}


def _require_legal(store: Store, name: str, branch: str, ours: str) -> None:
    """The remote's side as a plain sync holds it before it takes it: its new commits verify and
    the files that differ from ours validate (the merge was refused before it checked them)."""
    findings = verify(store, None, ours, taken=True)["findings"]
    if findings:
        raise MergeRefused(f"history from {name}/{branch} does not verify: {findings[0]['message']}; "
                           "nothing was changed", conflicts=[], findings=findings)
    out = git.run(store.worktree, "diff", "--name-only", "--no-renames", "-z", ours, "HEAD", "--",
                  store.git_path(".")).stdout.decode("utf-8", "surrogateescape")
    prefix = "" if store.prefix == "." else store.prefix + "/"
    rels = [n[len(prefix):] for n in out.split("\0") if n.startswith(prefix) and n.endswith(".yaml")]
    problems = [str(p) for p in validate.opened_store(store, rels)]
    if problems:
        raise MergeRefused(f"the state of {name}/{branch} is not a legal store: {problems[0]}; nothing was changed",
                           conflicts=[], problems=problems)


def forget(store: Store, kept: str) -> None:
    """Remove the originals' ref again (the replay it belongs to was undone)."""
    git.run(store.worktree, "update-ref", "-d", kept, check=False)


def _rev(store: Store, ref: str) -> str | None:
    try:
        return objects.resolve(store.worktree, ref)
    except StatedirError:
        return None


def _stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def _skip(commit: Commit) -> dict[str, Any]:
    if len(commit.parents) > 1:
        why = "a merge: the transitions on its sides are replayed one by one"
    elif not commit.action:
        why = "a hand edit (no statedir trailers): nothing to decide again; kept under the ref"
    elif commit.action in ("init", "doctor", "sync"):
        why = f"`{commit.action}` is no transition of the state; run it again if it is still needed"
    elif commit.action in ("research", "signers"):
        why = f"a {commit.action} commit: replay does not re-apply it yet; kept under the ref"
    else:
        why = "no recorded request (Statedir-Request) to decide again; kept under the ref"
    return {"commit": commit.sha, "run": commit.run_id or None, "action": commit.action or None, "reason": why}


def _replayable(commit: Commit) -> Callable[[Store, Commit], dict[str, Any]] | None:
    """How the commit's request is decided again through the live write path (None: it cannot be)."""
    if len(commit.parents) > 1 or not commit.run_id:
        return None
    if commit.action.startswith("bus-"):
        return _bus
    if commit.request is None or not isinstance(commit.request.get("args"), dict):
        return None
    if commit.action in decision.HANDLERS:
        return _transition
    return {"rollback": _rollback, "new": _new}.get(commit.action)


def _request(commit: Commit) -> Request:
    """The recorded request, with a fresh identity of its own (request_id None: minted as it applies)."""
    assert commit.request is not None
    reason = commit.request.get("reason")
    return Request(commit.action, commit.actor, dict(commit.request["args"]),
                   reason if isinstance(reason, str) else None, who=dict(commit.who))


def _transition(store: Store, commit: Commit) -> dict[str, Any]:
    result = transaction.transition(store, commit.run_id, _request(commit))
    if result.get("commit") is None:
        result["summary"] = f"already so on the remote's side: {result.get('summary')}"
    return result


def _rollback(store: Store, commit: Commit) -> dict[str, Any]:
    req = _request(commit)
    return rollback.rollback(store, commit.run_id, str(req.args.get("to")), req.reason or "", req.actor)


def _new(store: Store, commit: Commit) -> dict[str, Any]:
    req = _request(commit)
    t = template_mod.load(str(req.args.get("template")), store.root / "templates")
    return run_creation.create(store, commit.run_id, req, t)


def _bus(store: Store, commit: Commit) -> dict[str, Any]:
    """A bus commit records no request: its one changed field is read from the original's two
    versions of the session (as verify does), then set or appended again through the bus."""
    verb = commit.action.removeprefix("bus-")
    bus = Bus(store, commit.run_id)
    if verb == "init":
        return bus.init(actor=commit.actor)
    if verb == "clear":
        return bus.clear(actor=commit.actor)
    if verb not in ("set", "append"):
        raise MergeRefused(f"the bus has no verb {verb!r}", verb=verb)
    rel = store.git_path(session.rel_path(commit.run_id))
    before = _blob(store, commit.parent, rel)
    after = _blob(store, commit.sha, rel)
    if after is None:
        raise GitError(f"{commit.sha[:12]} does not hold {rel}", commit=commit.sha)
    old = session.parse(before, commit.run_id) if before is not None else session.fresh(commit.run_id)
    new = session.parse(after, commit.run_id)
    field, value = bus_replay.changed_field(old, new, append=verb == "append")
    write = bus.append if verb == "append" else bus.set
    return write(field, str(value), actor=commit.actor)


def _blob(store: Store, rev: str | None, path: str) -> bytes | None:
    if rev is None:
        return None
    proc = git.run(store.worktree, "cat-file", "blob", f"{rev}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None

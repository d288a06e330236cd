"""Rollback: one new transition that brings a run's mutable files back to an earlier commit.

History is never rewritten: the append-only logs keep every entry and gain the one recording
the rollback, passports stay, and version counters never go back (a label is never reused).
"""
from __future__ import annotations

import copy
from typing import Any

from statedir.engine import transaction
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunDraft, Request, RunData, require_live, require_permission
from statedir.errors import IllegalTransition, InvalidValue, UnknownRun
from statedir.gitops import git, objects
from statedir.history.snapshot import CommitReader
from statedir.store.store import Store


def decide(t: Template, run: RunData, target: RunData, req: Request, now: str) -> Change:
    """Pure: the change that makes `run` what `target` (the run at `req.args['to']`) was."""
    require_permission(t, req.actor, "rollback")
    require_live(t, run.state)
    to = req.args["to"]
    if target.state.get("template") != run.state.get("template"):
        raise IllegalTransition(f"the run used template {target.state.get('template')!r} at {to[:10]}, "
                                f"{run.state.get('template')!r} now; a rollback cannot change its template")
    missing = [sid for sid in t.stage_ids if sid not in target.stages]
    if missing:
        raise IllegalTransition(f"the run at {to[:10]} has no stage {', '.join(missing)}")
    draft = RunDraft(run)
    state = copy.deepcopy(target.state)
    counters = dict(state.get("version_counters", {}))
    for series, count in run.state.get("version_counters", {}).items():
        counters[series] = max(count, counters.get(series, 0))  # a version label is never reused
    state["version_counters"] = counters
    state["updated_at"] = run.state.get("updated_at")
    draft.state = state
    for sid in t.stage_ids:
        draft.stages[sid] = copy.deepcopy(target.stages[sid])
    change = draft.change(f"rollback to {to[:10]}", now, rolled_back_to=to)
    if change.state is None and not change.stages:
        raise IllegalTransition(f"run {run.run_id} is already as it was at {to[:10]}; nothing to roll back",
                                to=to)
    return change


def target_at(reader: CommitReader, run_id: str, to: str, head: str | None) -> RunData:
    """The run at commit `to`, which must be an ancestor of `head`; refused (exit 1) otherwise."""
    if head is None or not objects.is_ancestor(reader.store.worktree, to, head):
        raise IllegalTransition(f"{to[:10]} is not an ancestor of the current commit; rollback only goes "
                                "back along this branch's history", to=to)
    try:
        return reader.run(to, run_id, boundary_log=True)[1]
    except UnknownRun:
        raise IllegalTransition(f"commit {to[:10]} holds no run {run_id!r}", run_id=run_id, to=to) from None


def rollback(store: Store, run_id: str, rev: str, reason: str, actor: str, *,
             timeout: float | None = None, who: dict[str, str] | None = None) -> dict[str, Any]:
    """Lock -> resolve REV -> read the run there -> decide -> the one write path."""
    if not reason or not reason.strip():
        raise InvalidValue("{opt:reason} must say why the run is rolled back")
    store.require_run(run_id)
    with store.locked(timeout, scope=store.run_dir(run_id)):
        to = objects.resolve(store.worktree, rev)
        with objects.ObjectReader(store.worktree) as objs:
            target = target_at(CommitReader(store, objs), run_id, to, git.head(store.worktree))
        t, run, sources = transaction.load_run(store, run_id)
        now = transaction.utc_now()
        req = Request("rollback", actor, {"to": to}, reason, who=who)
        change = decide(t, run, target, req, now)
        return transaction.apply(store, run_id, change, req, now, sources, transaction.schemas_if_missing(store, t),
                                 scope=transaction.scope_of(t), declared=t.logs, t=t)

"""`bind` and `seal` as transactions: lock, load, (hash,) decide, one commit."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.ars import artifacts
from statedir.engine import adjudication_contract, transaction
from statedir.engine.rules import adjudication as adjudication_rules
from statedir.engine.transition_data import Request, require_permission
from statedir.errors import InvalidValue
from statedir.hints import opt
from statedir.store import layout
from statedir.store.store import Store


def bind(store: Store, run_id: str, req: Request, *, timeout: float | None = None) -> dict[str, Any]:
    """One binding, one commit; it follows a transition already committed, so a refusal here
    leaves that transition as it is."""
    return transaction.transition(store, run_id, req, timeout=timeout)


def seal(store: Store, run_id: str, artifact_root: Path, req: Request, *,
         timeout: float | None = None) -> dict[str, Any]:
    """Hash every bound artifact under `artifact_root` and seal the rows; the same rows again
    change nothing (`commit` null), different rows are refused."""
    layout.check_run_id(run_id)
    rows: Any = req.args.get("bindings")
    with store.locked(timeout, scope=store.run_dir(run_id)):
        t, run, sources = transaction.load_run(store, run_id)
        require_permission(t, req.actor, req.action)
        if rows is not None:
            problems = adjudication_contract.rows_problems(rows, sealed=False)
            if problems:
                raise InvalidValue(f"{opt('bindings')}: {problems[0]}", problems=problems)
        else:
            rows = run.state.get(adjudication_rules.PENDING)
            problems = adjudication_contract.rows_problems(rows, sealed=False)
            if problems:
                raise InvalidValue(f"the run's pending bindings are not the five ARS rows: {problems[0]}",
                                   problems=problems)
        if run.state["pipeline_state"] in t.terminal_targets:  # no file is read before the terminal state
            sealed = artifacts.hash_rows(artifact_root, rows)
        else:
            sealed = rows
        now = transaction.utc_now()
        hashed = Request(req.action, req.actor, {"sealed": sealed}, req.reason)
        change = adjudication_rules.seal(t, run, hashed, now)
        if change is None:
            return {"run_id": run_id, "commit": None, "changed": False,
                    "summary": "already sealed with these rows; nothing to do", "sources": sealed}
        extra = transaction.schemas_if_missing(store, t)
        return {**transaction.apply(store, run_id, change, hashed, now, sources, extra, scope=transaction.scope_of(t),
                                     declared=t.logs, t=t),
                "changed": True}

"""`new`: a run's first commit, through the one write path (statedir.engine.transaction): its files
and its first log entry, with the template's files and compiled schemas the store lacks. Only `new`
(and a replayed `new`) loads it: reading a run loads none of what making one needs."""
# Lazy imports: the template's flow (with dataclasses and inspect, about 12 ms of import), to explore a template that
#   is not shipped on its first use: a `new` on a shipped template loads none of it.
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.engine import attribution, runs, transaction
from statedir.engine import template as template_mod
from statedir.engine.admission import refuse_writer
from statedir.engine.run_reading import Sources
from statedir.engine.template import Template
from statedir.engine.template import versions as template_versions
from statedir.engine.transaction import apply, missing_schemas, scope_of, stamped
from statedir.engine.transition_data import Request, require_permission
from statedir.errors import RunExists
from statedir.store import layout
from statedir.store.store import Store


def create(store: Store, run_id: str, req: Request, t: Template, *, timeout: float | None = None,
           template_file: Path | None = None) -> dict[str, Any]:
    """`new`: the run's files and its first log entry, one commit (a log appears with its
    first entry: a new run has only `history/transitions/<today>.yaml`)."""
    layout.check_run_id(run_id)
    refuse_writer(t, req.actor)
    attribution.check(t, req)
    require_permission(t, req.actor, "new")
    if t.source not in {str(path) for path in template_mod.shipped().values()}:  # the shipped are tested
        from statedir.engine.template import flow as template_flow

        template_flow.require_no_dead_end(t, store.cache_dir)  # explored on a template's first use only
    with store.locked(timeout, scope=store.run_dir(run_id)):
        base = store.run_dir(run_id)
        if store.path(f"{base}/state.yaml").exists():
            raise RunExists(f"run {run_id!r} already exists", run_id=run_id)
        now, req = transaction.utc_now(), stamped(req)  # one clock for every transition
        _, change = runs.new_run(t, run_id, req.args["topic"], req.args.get("language") or "en",
                                 req.args.get("entry_point"), now, passport=req.args.get("passport"),
                                 confirm_skip=bool(req.args.get("confirm_skip")), file=req.args.get("file"),
                                 brought=req.args.get("entry_materials"),
                                 settings=req.args.get("settings"))
        scope = scope_of(t)
        extra: dict[str, str] = {}
        if template_file is not None:
            extra.update(template_versions.store_files(store, t, template_file))
        extra.update(missing_schemas(store, t))
        return apply(store, run_id, change, req, now, Sources(store), extra, scope=scope, declared=t.logs, t=t)

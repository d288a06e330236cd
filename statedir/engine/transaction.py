"""The one write path: lock, load, decide, validate, write atomically, commit once (a run is read
through statedir.engine.run_reading, which `status` and `next` use alone). A refusal carries what
its moves are computed from (RefusedAt): the API names them (statedir.api.moves, `next`'s, which
loads every action's rules), so an accepted transition loads none of them (tests/test_architecture.py)."""
from __future__ import annotations

import time
from collections.abc import Container
from typing import Any

from statedir import request_ids
from statedir.engine import admission, attribution, run_shape
from statedir.engine import template as template_mod
from statedir.engine.rules import decision
from statedir.engine.run_reading import Sources, load_run
from statedir.engine.template import Template
from statedir.engine.template import compiled as compile_mod
from statedir.engine.template import crossfile as template_crossfile
from statedir.engine.transition_data import Change, Request, RunData
from statedir.errors import IllegalTransition, InvalidValue, StatedirError, ValidationFailed
from statedir.files import schema, yaml
from statedir.gitops import commit_message, identity
from statedir.hints import Hint, said
from statedir.store import layout, run_logs
from statedir.store.store import Store
from statedir.store.write import persist

LOGS = template_mod.LOGS
# Logs whose entries are named by a hash chain over their content (the reset boundaries: a
# boundary made alike on two machines is one boundary of the chain, resumed once), not by the
# request that wrote them.
CHAINED = ("reset_boundary",)
# Who, besides the role, a transition-log entry names (the MCP client: in the commit's trailers only).
LOGGED_WHO = ("person", "answered_by", "via", "channel")


class RefusedAt:
    """What a refusal's moves are computed from: the run's template, the run as read, the time it
    was refused at, and whether the transaction named the run in its details (the moves come
    before it). Kept on the refusal (`_refused_at`), never serialised."""

    __slots__ = ("template", "run", "now", "named_run")

    def __init__(self, template: Template, run: RunData, now: str, *, named_run: bool) -> None:
        self.template, self.run, self.now, self.named_run = template, run, now, named_run


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # time, not datetime: one import less


def stamped(req: Request) -> Request:
    """The request with an identity of its own (a fresh request id unless it has one)."""
    if req.request_id is not None:
        return req
    return Request(req.action, req.actor, req.args, req.reason, request_ids.new(), req.who)


def planned(base: str, change: Change, req: Request, now: str,
            declared: tuple[str, ...] = LOGS, t: Template | None = None,
            existing: Container[str] = ()) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """The whole files and the log entries a change writes into run folder `base` (each entry
    into its day's segment), checked against the logs the run's template `declared`, the limits
    every reader enforces and their schemas (verify's replay shares it). With the run's template
    `t`, state and stage files in their written shape (statedir.engine.run_shape): a stage with
    nothing to say gets no file unless it has one (`existing`, the run files read)."""
    files = run_shape.files(t, base, change.state, change.stages, existing)
    files.update({f"{base}/materials/{label}.yaml": p for label, p in change.passports.items()})
    entry = {"at": now, "actor": req.actor, "action": req.action, "summary": change.summary,
             "reason": req.reason, **{key: req.who[key] for key in LOGGED_WHO if req.who.get(key)}}
    logged = [*change.logs, ("transitions", entry)]
    if req.request_id is not None:  # every entry the transition writes names it (old commits: none)
        logged = [(name, e if name in CHAINED else {**e, "request_id": req.request_id}) for name, e in logged]
    undeclared = sorted({name for name, _ in change.logs if name not in declared})
    if undeclared:
        raise IllegalTransition(f"the run's template declares no {', '.join(undeclared)} log (it holds "
                                f"{', '.join(declared)}); add it to the template's `logs:`",
                                logs=undeclared, declared=list(declared))
    appends = [(run_logs.target(base, name, e, now), e) for name, e in logged]
    for rel, data in [*files.items(), *appends]:
        yaml.check_depth(data, rel)
    problems = []
    for rel, data in files.items():
        problems += schema.validate(layout.schema_for(rel) or "", data, rel)
    for rel, data in appends:
        problems += schema.validate(layout.schema_for(rel) or "", data, rel, pointer="$defs/entry")
    if problems:
        raise ValidationFailed(f"the change would write invalid state: {problems[0]}",
                               errors=[p.as_dict() for p in problems])
    return files, appends


def apply(store: Store, run_id: str, change: Change, req: Request, now: str,
          sources: Sources | None, extra_files: dict[str, str] | None = None, *,
          scope: str | None = None, declared: tuple[str, ...] = LOGS, t: Template | None = None) -> dict[str, Any]:
    """Persist an accepted change: validate everything first, then write, append, commit.
    Run files point at their template's compiled schemas under `.schemas/<scope>/`; with the
    run's template `t`, state and stage files are written in their shape (statedir.engine.run_shape)."""
    req = stamped(req)
    files, appends = planned(store.run_dir(run_id), change, req, now, declared, t, sources.raw if sources else ())
    merged = {rel: sources.round_trip(rel) if sources else None for rel in files}
    texts = {rel: yaml.dump(data if merged[rel] is None else yaml.merge(merged[rel], data),
                            layout.schema_ref(rel, scope)) for rel, data in files.items()}
    texts.update(extra_files or {})
    entries = [(rel, yaml.dump_entry(data), yaml.header(layout.schema_ref(rel, scope))) for rel, data in appends]
    message = commit_message.message(
        change.summary, run_id, req.actor, req.action, reason=req.reason,
        request={"at": now, "args": req.args, "reason": req.reason, "request_id": req.request_id},
        trailers={**identity.trailers(req.who),
                  **({"Statedir-Rollback-To": req.args["to"]} if req.action == "rollback" else {})},
        request_id=req.request_id)
    try:  # encoded once, before anything is written: an undecodable argument changes nothing
        encoded = {rel: text.encode("utf-8") for rel, text in texts.items()}
        for text in [*(entry for _, entry, _ in entries), message]:
            text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValue("a value is not valid UTF-8 text (undecodable bytes in an argument?)") from None
    entries = run_logs.place(entries, lambda rel: run_logs.size(store, rel))  # a full day's file rolls over
    unwritten = run_shape.unwritten(store.run_dir(run_id), change.stages, files, sources.raw if sources else {})
    sha = persist(store, writes=encoded, appends=entries, message=message, author=req.actor, absent=unwritten)
    if sources is not None:
        for rel, data in files.items():
            sources.cache.put(schema.cache_kind(layout.schema_for(rel) or ""), encoded[rel], data,
                              merged[rel] is None)
    result = {"run_id": run_id, "commit": sha, "summary": change.summary, **change.result}
    if store.warnings:
        result["warnings"] = [*result.get("warnings", []), *store.warnings]
    return result


def transition(store: Store, run_id: str, req: Request, *, timeout: float | None = None) -> dict[str, Any]:
    """Lock -> load -> decide -> write -> commit, for every mutating command on a run."""
    layout.check_run_id(run_id)
    with store.locked(timeout, scope=store.run_dir(run_id)):
        t, run, sources = load_run(store, run_id,
                                   ledger=req.action == "resume" or bool(req.args.get("reset_boundaries")))
        now, req = utc_now(), stamped(req)
        try:
            admission.refuse_writer(t, req.actor)  # statedir itself is no caller, before anything else is asked
            req = attribution.users_answer(t, run, req)
            attribution.check(t, req)
            admission.admit(t, run, req)
            change = decision.decide(t, run, req, now)
        except StatedirError as refusal:
            refusal._refused_at = RefusedAt(t, run, now, named_run="run_id" not in refusal.details)
            refusal.details.setdefault("run_id", run_id)
            raise
        if change is None or change.noop:
            result = {"run_id": run_id, "commit": None, "changed": False,
                      "summary": change.summary if change is not None else "nothing to change"}
        else:
            result = apply(store, run_id, change, req, now, sources, schemas_if_missing(store, t),
                           scope=scope_of(t), declared=t.logs, t=t)
            opened = _opened_checkpoint(t, run.state, change.state)
            if opened:
                result["checkpoint"] = opened
        return _warn_of_hand_edits(t, run, store.run_dir(run_id), result)


def _opened_checkpoint(t: Template, before: dict[str, Any], after: dict[str, Any] | None) -> dict[str, Any] | None:
    """The checkpoint a transition opened (what the pipeline now awaits), for the caller's next step."""
    awaiting = t.pipeline["awaiting"]
    if not after or after.get("pipeline_state") != awaiting or before.get("pipeline_state") == awaiting:
        return None
    checkpoint = after.get("checkpoint") or {}
    opened = {key: checkpoint.get(key) for key in ("stage", "type", "choices", "default")}
    stage = opened["stage"]  # and the stage as the dashboard and messages name it (3p: 3')
    return {**opened, "display": t.display(stage) if stage in t.stage_ids else stage}


def _warn_of_hand_edits(t: Template, run: RunData, base: str, result: dict[str, Any]) -> dict[str, Any]:
    """A run whose files break a rule (a hand edit committed with --no-verify) is still moved
    only by the rules; the result says what was wrong, which file, and how to look further."""
    found = template_crossfile.loaded_run(t, base, run.state, run.stages)
    if found:
        result.setdefault("warnings", []).extend(
            said(f"{problem} (as committed before this transition, which changed only what the rules allow; "
                 "`{hint}` lists every problem, `{hint:2}` shows who made it)", Hint("validate"), Hint("log"))
            for problem in found)
    return result


def scope_of(t: Template) -> str | None:
    return compile_mod.scope(t)


def schemas_if_missing(store: Store, t: Template) -> dict[str, str]:
    """The compiled schemas, when a run made by an older statedir lacks them (one stat)."""
    scope = scope_of(t)
    if scope is None or (store.root / ".schemas" / scope / "run-state.schema.json").is_file():
        return {}
    return missing_schemas(store, t)


def missing_schemas(store: Store, t: Template) -> dict[str, str]:
    """The template's compiled schemas the store lacks (or holds stale), for editors offline."""
    files = compile_mod.schema_files(t)
    return {rel: text for rel, text in files.items() if store.read_bytes(rel) != text.encode("utf-8")}

"""The one write path: lock, load, decide, validate, write atomically, commit once."""
# Lazy imports: the write path's modules (the rules' decision table, admission, attribution, crossfile checks, next
#   moves, the compiled schemas) and template versions (a template not the shipped one): `status --line`, `next`, `bus
#   set` and `log` read runs through this module and load none of them.
from __future__ import annotations

import time
from collections.abc import Container
from typing import Any

from statedir import request_ids
from statedir.engine import run_settings, run_shape
from statedir.engine import template as template_mod
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, Request, RunData
from statedir.errors import CorruptStore, IllegalTransition, InvalidValue, StatedirError, ValidationFailed
from statedir.files import schema, yaml, yaml_fast_reader
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


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # time, not datetime: one import less


def stamped(req: Request) -> Request:
    """The request with an identity of its own (a fresh request id unless it has one)."""
    if req.request_id is not None:
        return req
    return Request(req.action, req.actor, req.args, req.reason, request_ids.new(), req.who)


def _problems(rel: str, plain: Any, doc: Any = None) -> list[schema.Problem]:
    name = layout.schema_for(rel)
    return schema.validate(name, plain, rel, source=doc) if name else []


def _checked(rel: str, doc: Any) -> dict[str, Any]:
    plain = yaml.to_plain(doc)
    problems = _problems(rel, plain, doc)
    if problems or not isinstance(plain, dict):
        raise CorruptStore(f"{problems[0] if problems else rel + ': not a mapping'}; "
                           "fix the file or `git checkout` it", file=rel,
                           errors=[p.as_dict() for p in problems])
    return plain


class Sources:
    """The files a command read: plain data (through the parse cache), and on demand the
    round-trip documents that edits are merged into so hand comments survive."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cache = store.cache()
        self.raw: dict[str, bytes] = {}
        self.docs: dict[str, Any] = {}
        self.canonical: dict[str, bool] = {}

    def read_optional(self, rel: str) -> dict[str, Any] | None:
        """A file's plain data, None where it is absent (a stage without a file)."""
        raw = self.store.read_bytes(rel)
        return None if raw is None else self._parsed(rel, raw)

    def read(self, rel: str) -> dict[str, Any]:
        return self._parsed(rel, self.store.read_bytes(rel))

    def _parsed(self, rel: str, raw: bytes | None) -> dict[str, Any]:
        if not raw:
            raise CorruptStore(f"{rel} is missing or empty", file=rel)
        self.raw[rel] = raw

        def parse() -> tuple[Any, bool]:
            ref = layout.own_ref(rel, raw)
            own = yaml_fast_reader.read_own(raw, ref)
            if isinstance(own, dict) and not _problems(rel, own):
                return own, True
            doc = self.docs[rel] = yaml.load(raw, rel)  # ruamel: hand-edited text, or errors with lines
            plain = _checked(rel, doc)
            return plain, yaml.dump(plain, ref).encode() == raw

        plain, self.canonical[rel] = self.cache.through(schema.cache_kind(layout.schema_for(rel) or ""), raw, parse)
        return plain  # type: ignore[no-any-return]

    def round_trip(self, rel: str) -> Any:
        """The round-trip document to merge into, or None where a plain dump is identical."""
        if rel not in self.raw or self.canonical.get(rel):
            return None
        if rel not in self.docs:
            self.docs[rel] = yaml.load(self.raw[rel], rel)
        return self.docs[rel]


def load_run(store: Store, run_id: str, *, ledger: bool = False) -> tuple[Template, RunData, Sources]:
    """A run as plain data, its template, and the sources its files came from; with `ledger` (the
    keyword of the API's StateDir.load), its reset-boundary log (RunData.boundary_log) whatever the
    run settings say."""
    base = store.require_run(run_id)
    sources = Sources(store)
    state = sources.read(f"{base}/state.yaml")
    if state.get("run_id") != run_id:
        raise CorruptStore(f"{base}/state.yaml holds run_id {state.get('run_id')!r}", file=f"{base}/state.yaml")
    t = run_template(store, state)
    state = run_shape.filled_state(t, state)  # what the file leaves out at its defaults (statedir.engine.run_shape)
    stages = {sid: run_shape.filled_stage(t, sid, sources.read_optional(f"{base}/stages/{sid}.yaml"))
              for sid in t.stage_ids}
    passports = {label: sources.read(f"{base}/materials/{label}.yaml")
                 for label in state.get("current_version", {}).values()}
    run = RunData(run_id, state, stages, passports)
    if ledger or run_settings.effect_on(t, state, "reset_boundaries"):
        run.boundary_log = read_log(store, run_id, "reset_boundary")
    return t, run, sources


def read_log(store: Store, run_id: str, name: str) -> list[dict[str, Any]]:
    """A run's whole log, every segment in order ([] before its first entry)."""
    return run_logs.read(store, store.run_dir(run_id), name)


def run_template(store: Store, state: dict[str, Any]) -> Template:
    from statedir.engine.template import versions as template_versions

    # A run names a template the store holds or statedir ships, never a path; and keeps its version.
    try:
        return template_versions.run_template(store, state)
    except InvalidValue:
        raise CorruptStore(f"run {state['run_id']} uses template {state['template']!r}, which the store "
                           "does not hold", template=state["template"]) from None


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
    from statedir.engine import admission, attribution
    from statedir.engine.rules import decision

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
            refusal.details.setdefault("moves", legal_moves(store, t, run, now)["moves"])
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
    from statedir.engine.template import crossfile as template_crossfile

    found = template_crossfile.loaded_run(t, base, run.state, run.stages)
    if found:
        result.setdefault("warnings", []).extend(
            said(f"{problem} (as committed before this transition, which changed only what the rules allow; "
                 "`{hint}` lists every problem, `{hint:2}` shows who made it)", Hint("validate"), Hint("log"))
            for problem in found)
    return result


def legal_moves(store: Store, t: Template, run: RunData, now: str) -> dict[str, Any]:
    """`statedir next`: the moves the rules accept from the run's state, and what blocks the
    rest (statedir.engine.next_moves); the reset-boundary log is read for `resume`."""
    from statedir.engine import next_moves

    if run.boundary_log is None:
        run.boundary_log = read_log(store, run.run_id, "reset_boundary")
    return next_moves.moves(t, run, now)


def scope_of(t: Template) -> str | None:
    from statedir.engine.template import compiled as compile_mod

    return compile_mod.scope(t)


def schemas_if_missing(store: Store, t: Template) -> dict[str, str]:
    """The compiled schemas, when a run made by an older statedir lacks them (one stat)."""
    scope = scope_of(t)
    if scope is None or (store.root / ".schemas" / scope / "run-state.schema.json").is_file():
        return {}
    return missing_schemas(store, t)


def missing_schemas(store: Store, t: Template) -> dict[str, str]:
    """The template's compiled schemas the store lacks (or holds stale), for editors offline."""
    from statedir.engine.template import compiled as compile_mod

    files = compile_mod.schema_files(t)
    return {rel: text for rel, text in files.items() if store.read_bytes(rel) != text.encode("utf-8")}

"""What each command hands back: the document its `--json` prints, made of the API's result,
and its exit code (`Document`). One function per command, taking the StateDir and the command's
keyword arguments (its parameters but `store` and `json`); the command table names it
(`statedir.commands.table.Command.call`, a key of `CALLS`). The CLI prints a document (or its own
words for a person), the MCP server hands it to the agent: both serialise it as `Document.text`
does (statedir.commands.document), the one shape of each result. The reads and history are here, the writes in
statedir.api.documents_writes, the research ledger in statedir.api.research_call."""
# Lazy imports: api.documents_writes, api.making, api.research_call, engine.template, engine.template.catalog,
#   engine.validate, files.schema, history.doctor, history.pushed, store.store, views.graph_drawing: each method imports
#   what its own call uses, so a call pays for its own path only (every command imports statedir.api: docs/cli-
#   startup.md).
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.commands.document import Document
from statedir.errors import InvalidValue, MergeRefused


# --- reads


def runs(sd: Any) -> Document:
    """Every run; one whose state cannot be read with its error, and a warning."""
    rows = sd.runs()
    return Document(rows, said=tuple(f"run {row['run_id']} cannot be read: {row['error']['message']} "
                                     f"[{row['error']['code']}]" for row in rows if "error" in row))


def status_shape(report: dict[str, Any], line: bool) -> dict[str, Any]:
    """The dashboard's --json: the whole report, or with --line only {run_id, line}."""
    return {"run_id": report["run_id"], "line": report["line"]} if line else report


def status(sd: Any, *, run_id: str, line: bool) -> Document:
    return Document(status_shape(sd.status(run_id), line))


def show_format(format: str) -> None:
    """Refused where `show` does not know the format (checked before the store is opened)."""
    if format not in ("yaml", "json", "ars"):
        raise InvalidValue(f"{{opt:format}} takes yaml, json or ars, not {format!r}")


def show(sd: Any, *, run_id: str, format: str, at: str | None, history: bool) -> Document:
    show_format(format)
    return Document(sd.show(run_id, at=at, format="ars" if format == "ars" else "json", history=history))


def get(sd: Any, *, run_id: str, path: str, at: str | None) -> Document:
    return Document(sd.get(run_id, path, at=at))


def next_(sd: Any, *, run_id: str) -> Document:
    return Document(sd.next(run_id))


def prereq(sd: Any, *, run_id: str, stage: str) -> Document:
    report = sd.prereq(run_id, stage)
    return Document(report, 0 if report["prerequisites_met"] else 1)


def log(sd: Any, *, run_id: str | None, actor: str | None, action: str | None, since: str | None,
        limit: int | None, cursor: str | None) -> Document:
    """The audit trail: every entry, or with a cursor one page {entries, next_cursor}."""
    if cursor is not None:
        return Document(sd.log_page(run_id, cursor=cursor, limit=50 if limit is None else limit, actor=actor,
                                    action=action, since=since))
    return Document(sd.log(run_id, actor=actor, action=action, since=since, limit=limit))


def templates_of(name: str | None, held: Path | None) -> Any:
    """The templates statedir ships and `held` holds (a store's templates folder, None: no store),
    or with `name` that template's description."""
    from statedir.engine.template import catalog as template_catalog

    if name is not None:
        from statedir.engine import template

        return template_catalog.describe(template.load(name, held))
    return template_catalog.listed(held)


def templates(sd: Any, *, name: str | None) -> Document:
    return Document(templates_of(name, sd.store.root / "templates"))


def graph_of(load: Callable[[str], Any], held: Callable[[], Path | None], *, run_id: str | None,
             template: str | None, format: str) -> dict[str, Any]:
    """The stage graph drawn: of the run `load` reads, or of a template (in the store `held` names)."""
    from statedir.engine import template as template_mod
    from statedir.views import graph_drawing

    if format not in graph_drawing.FORMATS:
        raise InvalidValue(f"{{opt:format}} takes {' or '.join(graph_drawing.FORMATS)}, not {format!r}")
    if (run_id is None) == (template is None):
        raise InvalidValue("name a run or pass {opt:template} NAME (one of the two)")
    run = None
    if run_id is not None:
        t, run, _ = load(run_id)
    else:
        t = template_mod.load(template or "", held())
    return {"run_id": run_id, "template": t.name, "format": format, "graph": graph_drawing.draw(t, run, format)}


def graph(sd: Any, *, run_id: str | None, template: str | None, format: str) -> Document:
    return Document(graph_of(sd.load, lambda: sd.store.root / "templates", run_id=run_id, template=template,
                             format=format))


# --- checking files


def check_schema(schema: str | None) -> None:
    """Refused where `schema` names none of statedir's schemas."""
    from statedir.files import schema as schema_mod

    if schema is not None and schema not in schema_mod.schema_names():
        raise InvalidValue(f"unknown schema {schema!r}; one of {', '.join(schema_mod.schema_names())}")


def validate_files(files: list[Path], schema: str | None, skip_outside_stores: bool) -> list[Any]:
    """The problems of the named files, each against its schema or `schema` (those in no store
    passed over with `skip_outside_stores`)."""
    from statedir.engine import validate as validate_mod

    return validate_mod.files(files, schema, skip_outside=skip_outside_stores)


def validate_store(root: Path, progress: Callable[[int, int], None] | None = None) -> list[Any]:
    """The problems of every file of the store at `root`."""
    from statedir.engine import validate as validate_mod

    return validate_mod.store(root, progress=progress)


def validated(problems: list[Any]) -> dict[str, Any]:
    """validate's --json: {valid, errors} (the contract's shape)."""
    return {"valid": not problems, "errors": [p.as_dict() for p in problems]}


def validate(sd: Any, *, files: list[Path] | None, schema: str | None, skip_outside_stores: bool,
             verbose: bool) -> Document:
    check_schema(schema)
    problems = validate_files(files, schema, skip_outside_stores) if files else validate_store(sd.store.root)
    return Document(validated(problems), 1 if problems else 0)


# --- history


def diff(sd: Any, *, run_id: str, start: str, end: str | None) -> Document:
    return Document(sd.diff(run_id, start, end))


def versions(sd: Any, *, run_id: str, material: str) -> Document:
    return Document(sd.versions(run_id, material))


def rollback(sd: Any, *, run_id: str, to: str, reason: str, actor: str, as_role: str | None,
             expect: str | None) -> Document:
    return Document(sd.rollback(run_id, to=to, reason=reason, actor=actor, role=as_role, expect=expect))


NOTHING_PUSHED = {"clean": True, "checked": 0, "findings": [], "pushed": False}  # verify --pushed, nothing sent


def verify(sd: Any, *, run_id: str | None, since: str | None, acknowledge: str | None, reason: str | None,
           pushed: bool, actor: str) -> Document:
    """History replayed (exit 1 with findings); with `acknowledge`, that commit's findings accepted;
    with `pushed`, only what the push being made sends (the pre-commit framework's variables)."""
    if acknowledge is not None:
        if not reason:
            raise InvalidValue("{opt:acknowledge} needs {opt:reason} (what the review found)", argument="reason")
        return Document(sd.acknowledge(acknowledge, reason=reason, actor=actor))
    if pushed:
        from statedir.history import pushed as pushed_mod

        wanted, since = pushed_mod.scope(sd.store, os.environ.get("PRE_COMMIT_LOCAL_BRANCH"), since,
                                         os.environ.get("PRE_COMMIT_TO_REF"))
        if not wanted:
            return Document(dict(NOTHING_PUSHED))
    result = sd.verify(run_id, since=since)
    return Document(result, 0 if result["clean"] else 1)


def doctor_at(root: Path, *, fix: bool, expect: str | None, timeout: float | None) -> Document:
    """What a crash, a clone or a hand edit left behind (repaired with `fix`), of the store at `root`
    opened without a StateDir: opening one rolls a dead writer's journal back, which doctor reports first."""
    from statedir.history import doctor as doctor_mod
    from statedir.store.store import Store

    opened = Store(root)
    with opened.expecting(expect):  # about the whole store
        result = doctor_mod.doctor(opened, fix=fix, timeout=timeout)
    return Document(result, 1 if result["findings"] else 0)


def doctor(sd: Any, *, fix: bool, expect: str | None) -> Document:
    return doctor_at(sd.store.root, fix=fix, expect=expect, timeout=sd.lock_timeout)


def sync(sd: Any, *, remote: str | None, replay: bool, actor: str, expect: str | None) -> Document:
    """Fetch, merge, validate, verify, push; a refused merge is its error document (its conflicts)."""
    try:
        return Document(sd.sync(remote, actor=actor, expect=expect, replay=replay))
    except MergeRefused as exc:
        return Document(exc.as_json(), exc.exit_code)


def init(sd: Any, *, directory: Path, branch: str | None, new_store: bool, store: Path | None) -> Document:
    """Make a store (`statedir init`): at --store where given and no directory is, else at `directory`."""
    from statedir.api import making

    return Document(making.init(store if store is not None and directory == Path("state") else directory,
                                branch=branch, new_store=new_store))


_HERE: dict[str, Callable[..., Document]] = {
    "init": init, "runs": runs, "status": status, "show": show, "get": get, "next": next_, "log": log,
    "prereq": prereq, "templates": templates, "graph": graph, "validate": validate, "diff": diff,
    "versions": versions, "rollback": rollback, "verify": verify, "doctor": doctor, "sync": sync}


def call(name: str) -> Callable[..., Document]:
    """The document function the command table names `name` (`Command.call`); a write's module,
    or the research ledger's, loaded only for its own commands."""
    if name in _HERE:
        return _HERE[name]
    if name == "research":
        from statedir.api import research_call

        return research_call.research
    from statedir.api import documents_writes

    return documents_writes.CALLS[name]

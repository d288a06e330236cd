"""Reading commands: runs, templates, show, get, status, next, prereq, log."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

from statedir.cli import completion
from statedir.cli.common import JsonOpt, RunArg, StoreOpt, open_store
from statedir.cli.registry import app
from statedir.cli.render import emit_json, table
from statedir.commands.params import Argument, Option


@app.command()
def runs(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """List runs: id, template, pipeline_state, current_stage.

    A run whose state cannot be read is still listed, with its error (and a warning on
    stderr); `statedir validate` says what is wrong with it.
    """
    from statedir.api import RUN_FIELDS
    from statedir.cli.render import warn

    rows = open_store(store).runs()
    for row in rows:
        if "error" in row:
            warn(f"run {row['run_id']} cannot be read: {row['error']['message']} [{row['error']['code']}]")
    if json:
        emit_json(rows)
    else:
        print(table(rows, list(RUN_FIELDS)) or "no runs yet")


@app.command()
def templates(name: Annotated[Optional[str], Argument(
                  help="Describe this template (a name or a template file): its stages, statuses, actions.")] = None,
              store: StoreOpt = None, json: JsonOpt = False) -> None:
    """List the templates statedir ships and the store holds; with NAME, describe that one.

    A template's description is its own vocabulary: stages, statuses and their moves, pipeline
    states, checkpoint responses, actors and their actions.
    """
    from statedir.cli.common import store_path
    from statedir.engine import template
    from statedir.engine.template import catalog as template_catalog
    from statedir.errors import NotAStore

    try:
        held: Optional[Path] = store_path(store) / "templates"
    except NotAStore:
        held = None
    if name is not None:
        info = template_catalog.describe(template.load(name, held))
        if json:
            emit_json(info)
        else:
            print(template_catalog.render(info))
        return
    rows = template_catalog.listed(held)
    if json:
        emit_json(rows)
    else:
        print(table(rows, ["name", "version", "source", "title"]))
        print("\n`statedir templates NAME` shows a template's stages, statuses and actions.")


AtOpt = Annotated[Optional[str], Option(
    "--at", metavar="REV", help="As of this commit (anything git rev-parse takes); nothing is checked out.")]


@app.command()
def show(run_id: RunArg,
         format: Annotated[str, Option("--format", help="yaml, json or ars (the State Tracker's single JSON).")] = "yaml",
         at: AtOpt = None,
         history: Annotated[bool, Option("--history/--no-history", help="Include the run's histories (--no-history: the run without them; they grow with every transition).")] = True,
         store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The whole run as one document (--at REV: as it was at that commit)."""
    from statedir.errors import InvalidValue

    if format not in ("yaml", "json", "ars"):
        raise InvalidValue(f"--format takes yaml, json or ars, not {format!r}")
    doc = open_store(store).show(run_id, at=at, format="ars" if format == "ars" else "json", history=history)
    if json or format != "yaml":
        emit_json(doc)
    else:
        from statedir.files import yaml

        print(yaml.dump(doc), end="")


@app.command()
def get(run_id: RunArg, path: Annotated[str, Argument(help="Dotted path, e.g. stages.2.5.status.")],
        at: AtOpt = None, store: StoreOpt = None, json: JsonOpt = False) -> None:
    """One value by dotted path (a key holding a dot, like stage 2.5, matches whole); --at REV: as of a commit."""
    value = open_store(store).get(run_id, path, at=at)
    if json or not isinstance(value, (str, int, float)) or isinstance(value, bool):
        emit_json(value)
    else:
        print(value)


@app.command()
def status(run_id: RunArg, line: Annotated[bool, Option("--line", help="Only the one-line form.")] = False,
           store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The Progress Dashboard (--line: the one-line form).

    --json adds its structure beside the text: stages with status, label and marker, the open
    checkpoint, the pipeline state; with --line too, only {run_id, line}.
    """
    report = open_store(store).status(run_id)
    if json:
        emit_json({"run_id": report["run_id"], "line": report["line"]} if line else report)
    else:
        print(report["line"] if line else report["dashboard"])


@app.command("next")
def next_(run_id: RunArg, store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The legal moves now: each command, its arguments' allowed values, its actor; and what blocks the rest.

    A move lists its required `args`, the `optional` ones that change what it records, their
    `allowed` values and the `actor` who may take it;
    a blocked move names what it `needs` (a material, a verdict, a cap). Found by asking the
    rules themselves; every refusal's details carry the same moves.
    """
    from statedir.views import moves_text

    result = open_store(store).next(run_id)
    if json:
        emit_json(result)
    else:
        print(moves_text.render(result))


@app.command()
def prereq(run_id: RunArg, stage: Annotated[str, Argument(help="The stage to check.", autocompletion=completion.stage_ids)],
           store: StoreOpt = None, json: JsonOpt = False) -> int:
    """Check the prerequisites for entering a stage (exit 1 when not met)."""
    report = open_store(store).prereq(run_id, stage)
    if json:
        emit_json(report)
    else:
        print(f"prerequisites for stage {stage}: "
              + ("met" if report["prerequisites_met"] else "NOT met"))
        for key in ("missing_required", "missing_recommended"):
            if report[key]:
                print(f"  {key.replace('_', ' ')}: {', '.join(report[key])}")
        if report["warning"]:
            print(f"  warning: {report['warning']}")
    return 0 if report["prerequisites_met"] else 1


@app.command()
def log(run_id: Annotated[Optional[str], Argument(help="Only this run's commits.")] = None,
        actor: Annotated[Optional[str], Option("--actor", help="Only this actor's transitions (a git author for others' commits).")] = None,
        action: Annotated[Optional[str], Option("--action", help="Only this action (stage, confirm, rollback, ...).")] = None,
        since: Annotated[Optional[str], Option("--since", metavar="DATE", help="Only commits since DATE (2026-11-30, 2026-11-30T12:00:00Z, '3 days ago').")] = None,
        limit: Annotated[Optional[int], Option("--limit", metavar="N", help="At most N entries (the newest).")] = None,
        cursor: Annotated[Optional[str], Option("--cursor", metavar="CURSOR", help="Read a page at a time: 'start' for the newest --limit entries (default 50), then the next_cursor each page gives; --json prints {entries, next_cursor}.")] = None,
        store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The audit trail, read from git: every commit that touched the store, statedir's or not (marked)."""
    sd = open_store(store)
    next_cursor = None
    if cursor is not None:
        page = sd.log_page(run_id, cursor=cursor, limit=50 if limit is None else limit, actor=actor, action=action,
                           since=since)
        entries: list[dict[str, Any]] = page["entries"]
        next_cursor = page["next_cursor"]
        if json:
            emit_json(page)
            return
    else:
        entries = sd.log(run_id, actor=actor, action=action, since=since, limit=limit)
    if json:
        emit_json(entries)
        return
    rows = [{**e, "actor": e["by"], "commit": e["commit"][:10], "action": e["action"] or "(not statedir)",
             "summary": e["summary"] + (f"  -- {' '.join(e['reason'].split())}" if e["reason"] else "")}
            for e in entries]
    filtered = any(v is not None for v in (actor, action, since))
    print(table(rows, ["time", "run_id", "actor", "action", "summary", "commit"]) or
          ("no transitions match" if filtered else "no transitions yet"))
    if next_cursor is not None:
        print(f"\nmore: --cursor {next_cursor}")

"""Reading commands: runs, templates, show, get, status, next, prereq, log."""
# Lazy imports: api, api.documents, api.texts, cli.common, cli.render, errors: imported by the command that uses them:
#   `statedir COMMAND` loads this module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

from statedir.cli import completion
from statedir.cli.common import JsonOpt, RunArg, StoreOpt, document, open_store
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

    found = document("runs", open_store(store), locals())
    rows = found.value
    for message in found.said:
        warn(message)
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
    from statedir.api import documents
    from statedir.cli.common import store_path
    from statedir.errors import NotAStore

    try:
        held: Optional[Path] = store_path(store) / "templates"
    except NotAStore:
        held = None
    if name is not None:
        info = documents.templates_of(name, held)
        if json:
            emit_json(info)
        else:
            from statedir.api import texts

            print(texts.template(info))
        return
    rows = documents.templates_of(None, held)
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
    from statedir.api.documents import show_format

    show_format(format)
    doc = document("show", open_store(store), locals()).value
    if json or format != "yaml":
        emit_json(doc)
    else:
        from statedir.api import texts

        print(texts.yaml(doc), end="")


@app.command()
def get(run_id: RunArg, path: Annotated[str, Argument(help="Dotted path, e.g. stages.2.5.status.")],
        at: AtOpt = None, store: StoreOpt = None, json: JsonOpt = False) -> None:
    """One value by dotted path (a key holding a dot, like stage 2.5, matches whole); --at REV: as of a commit."""
    value = document("get", open_store(store), locals()).value
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
    from statedir.api.documents import status_shape

    report = open_store(store).status(run_id)
    if json:
        emit_json(status_shape(report, line))
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
    from statedir.api import texts

    result = document("next", open_store(store), locals()).value
    if json:
        emit_json(result)
    else:
        print(texts.moves(result))


@app.command()
def prereq(run_id: RunArg, stage: Annotated[str, Argument(help="The stage to check.", autocompletion=completion.stage_ids)],
           store: StoreOpt = None, json: JsonOpt = False) -> int:
    """Check the prerequisites for entering a stage (exit 1 when not met)."""
    found = document("prereq", open_store(store), locals())
    report = found.value
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
    return int(found.code)


@app.command()
def log(run_id: Annotated[Optional[str], Argument(help="Only this run's commits.")] = None,
        actor: Annotated[Optional[str], Option("--actor", help="Only this actor's transitions (a git author for others' commits).")] = None,
        action: Annotated[Optional[str], Option("--action", help="Only this action (stage, confirm, rollback, ...).")] = None,
        since: Annotated[Optional[str], Option("--since", metavar="DATE", help="Only commits since DATE (2026-11-30, 2026-11-30T12:00:00Z, '3 days ago').")] = None,
        limit: Annotated[Optional[int], Option("--limit", metavar="N", help="At most N entries (the newest).")] = None,
        cursor: Annotated[Optional[str], Option("--cursor", metavar="CURSOR", help="Read a page at a time: 'start' for the newest --limit entries (default 50), then the next_cursor each page gives; --json prints {entries, next_cursor}.")] = None,
        store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The audit trail, read from git: every commit that touched the store, statedir's or not (marked)."""
    found = document("log", open_store(store), locals()).value
    if json:
        emit_json(found)
        return
    entries: list[dict[str, Any]] = found["entries"] if cursor is not None else found
    next_cursor = found["next_cursor"] if cursor is not None else None
    rows = [{**e, "actor": e["by"], "commit": e["commit"][:10], "action": e["action"] or "(not statedir)",
             "summary": e["summary"] + (f"  -- {' '.join(e['reason'].split())}" if e["reason"] else "")}
            for e in entries]
    filtered = any(v is not None for v in (actor, action, since))
    print(table(rows, ["time", "run_id", "actor", "action", "summary", "commit"]) or
          ("no transitions match" if filtered else "no transitions yet"))
    if next_cursor is not None:
        print(f"\nmore: --cursor {next_cursor}")

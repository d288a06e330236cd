"""Options every command takes, and discovery of the default store (the only cwd/env reader)."""
# Lazy imports: api, api.documents, api.places, cli.registry, cli.render, mcp.calls: imported by the command that uses
#   them: `statedir COMMAND` loads this module for any of its commands, and a plain call loads no typer (docs/cli-
#   startup.md).
from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Optional

from statedir.cli import completion
from statedir.commands.params import Argument, Option

StoreOpt = Annotated[Optional[Path], Option(
    "--store", envvar="STATEDIR_STORE", show_envvar=True,
    help="The store; default: the nearest state/statedir.yaml at or above the current directory, else "
         "the repository's store on a branch of its own (init --branch).")]
JsonOpt = Annotated[bool, Option("--json", help="Machine output on stdout: one JSON document.")]
ActorOpt = Annotated[str, Option(
    "--actor", envvar="STATEDIR_ACTOR", show_envvar=True,
    help="Who asks (checked against the template's roles): a role, or a person the store lists (statedir "
         "people) acting in one of theirs.")]
# The role a person acts in (`--actor NAME --role ROLE`): the command line's only (an MCP server acts
# in the roles it was started for).
RoleOpt = Annotated[Optional[str], Option(
    "--role", help="The role the person --actor names acts in (statedir people); needed where they hold several.")]
RunArg = Annotated[str, Argument(help="The run id.", show_default=False, autocompletion=completion.run_ids)]
ExpectOpt = Annotated[Optional[str], Option(
    "--expect", metavar="REV", help="Compare-and-swap: refuse (HEAD_MOVED, nothing changed) if what this "
    "writes (the run, the bus session) changed after REV, the commit you last read; unrelated commits never "
    "make it stale.")]
StageArg = Annotated[str, Argument(help="A stage id of the run's template (or an alias it declares).",
                                         autocompletion=completion.stage_ids)]
DEFAULT_ACTOR = "pipeline_orchestrator"


def store_path(store: Path | None) -> Path:
    """--store / STATEDIR_STORE, else the nearest store at or above the current directory."""
    from statedir.api import places

    return places.store_at(store)


def env_lock_timeout() -> float | None:
    """STATEDIR_LOCK_TIMEOUT in seconds, or None where it is not set."""
    from statedir.api import places

    raw = os.environ.get("STATEDIR_LOCK_TIMEOUT")
    return places.lock_timeout(raw, "STATEDIR_LOCK_TIMEOUT") if raw else None


def open_store(store: Path | None):  # type: ignore[no-untyped-def]
    """The StateDir for --store / STATEDIR_STORE / discovery, with STATEDIR_LOCK_TIMEOUT applied."""
    from statedir.api import StateDir
    from statedir.cli import render

    opened = StateDir(store_path(store), lock_timeout=env_lock_timeout(),
                      reset_boundaries=os.environ.get("ARS_PASSPORT_RESET") == "1")
    for message in opened.store.standing:  # a write's --json carries it in `warnings` too
        render.warn(message)
    return opened


def document(name: str, sd: Any, given: dict[str, Any]) -> Any:
    """Command `name`'s document (statedir.api.documents: what its --json prints, and its exit code)
    on `sd`, of the command's arguments `given` (its `locals()`: every parameter, as the MCP server
    passes them): those the document function takes, so never --store, --json or a name imported before."""
    from statedir.api import documents

    function = documents.call(name)
    code = function.__code__
    takes = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
    return function(sd, **{key: given[key] for key in takes})


def warn_unregistered(root: Path) -> None:
    """The missing-merge-driver warning, for a command that reads a store without open_store."""
    from statedir.api import places
    from statedir.cli import render

    message = places.unregistered(root)
    if message:
        render.warn(message)

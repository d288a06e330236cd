"""Options every command takes, and discovery of the default store (the only cwd/env reader)."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
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
# The StateDir a long-lived caller keeps open (`statedir mcp`): commands run in-process use it
# instead of opening the store again.
SERVED: ContextVar[Any] = ContextVar("statedir_served", default=None)


def store_path(store: Path | None) -> Path:
    """--store / STATEDIR_STORE, else the nearest store at or above the current directory."""
    from statedir.store import discovery

    return discovery.given_or_nearest(store)


def env_lock_timeout() -> float | None:
    """STATEDIR_LOCK_TIMEOUT in seconds, or None where it is not set."""
    from statedir.store.store import check_timeout

    raw = os.environ.get("STATEDIR_LOCK_TIMEOUT")
    return check_timeout(raw, "STATEDIR_LOCK_TIMEOUT") if raw else None


def open_store(store: Path | None):  # type: ignore[no-untyped-def]
    """The StateDir for --store / STATEDIR_STORE / discovery, with STATEDIR_LOCK_TIMEOUT applied."""
    served = SERVED.get()
    if served is not None:
        return served
    from statedir.api import StateDir
    from statedir.cli import render

    opened = StateDir(store_path(store), lock_timeout=env_lock_timeout(),
                      reset_boundaries=os.environ.get("ARS_PASSPORT_RESET") == "1")
    for message in opened.store.standing:  # a write's --json carries it in `warnings` too
        render.warn(message)
    return opened


def warn_unregistered(root: Path) -> None:
    """The missing-merge-driver warning, for a command that reads a store without open_store."""
    from statedir.cli import render
    from statedir.gitops import git, merge_driver_config

    worktree = git.find_worktree(root)
    message = merge_driver_config.warning(root, worktree) if worktree is not None else None
    if message:
        render.warn(message)


@contextlib.contextmanager
def serving(sd: Any) -> Iterator[list[str]]:
    """Commands run in-process meanwhile use `sd` (the store a long-lived caller keeps open), hand
    what they print (their --json document) to the list this yields instead of stdout, and word
    their refusals as the command line does (`--topic`): the server says them in its tools' words."""
    from statedir.argument_checks import CLI_WORDING
    from statedir.cli import render

    printed: list[str] = []
    token, wording, sink = SERVED.set(sd), CLI_WORDING.set(True), render.SINK.set(printed)
    try:
        yield printed
    finally:
        render.SINK.reset(sink)
        CLI_WORDING.reset(wording)
        SERVED.reset(token)


def mcp_host() -> Any:
    """What the MCP server is lent of the CLI: the command table, and how commands open the store."""
    from statedir.cli.registry import command_table
    from statedir.mcp.calls import Host

    return Host(commands=command_table(), open_store=open_store, serving=serving)

"""Commands for agent hosts: the MCP server and the instructions agents follow."""
# Lazy imports: api.places, api.texts, cli.render, errors, mcp.catalog, mcp.roles, mcp.server: imported by the command
#   that uses them: `statedir COMMAND` loads this module for any of its commands, and a plain call loads no typer
#   (docs/cli-startup.md).
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from statedir.cli.common import JsonOpt, StoreOpt, store_path
from statedir.cli.registry import app
from statedir.commands.params import Option


@app.command()
def mcp(store: StoreOpt = None,
        tools: Annotated[Optional[str], Option(
            "--tools", metavar="GROUP,...",
            help="Serve these groups of tools: pipeline, control, ars, history, bus, research, signing, "
                 "sync, or all (default: pipeline, the everyday work of driving a run).")] = None,
        role: Annotated[Optional[str], Option(
            "--role", metavar="ROLE,...",
            help="The roles this server's callers act in; a call naming another is refused, and one naming none "
                 "acts in the first (default: pipeline_orchestrator). Never user: the user's answers come only "
                 "through the client's form; nor state_tracker, statedir itself.")] = None,
        client_name: Annotated[Optional[str], Option(
            "--client-name", metavar="NAME",
            help="The client's name in the record (Statedir-Client); default: the name its handshake gives.")] = None) -> None:
    """Serve the store to an agent host over MCP on stdio (needs `pip install 'statedir[mcp]'`).

    One tool per command, results the --json documents (also as structured content), errors
    carrying statedir's codes; write tools take expect_head (their --expect). A MANDATORY
    checkpoint's confirm asks the user through the client's form (elicitation). Nothing but
    protocol goes to stdout.

    A path that is no store yet (or none found) is served all the same: every tool answers
    NOT_A_STORE with the fix, and the `init` tool makes the store there (default ./state).
    """
    from statedir.api.places import checked_name
    from statedir.errors import MissingDependency, NotAStore
    from statedir.mcp import catalog, roles

    groups = catalog.chosen_groups(tools) if tools is not None else catalog.DEFAULT
    acting = roles.chosen_roles(role) if role is not None else roles.DEFAULT_ROLES
    if client_name is not None:
        checked_name(client_name, "client")
    try:
        root = store_path(store)
    except NotAStore:  # nothing found: where `statedir init` would make one, the `init` tool makes it
        root = Path("state").absolute()
    try:
        from statedir.mcp import server
    except ImportError as exc:
        raise MissingDependency(f"the MCP SDK is not installed ({exc.name}): pip install 'statedir[mcp]'") from None
    from statedir.cli.registry import command_table
    from statedir.mcp.host import mcp_host

    server.serve(root, mcp_host(command_table()), groups, acting, client_name)


@app.command()
def agents(write: Annotated[Optional[Path], Option(
               "--write", help="Write into this file (AGENTS.md, CLAUDE.md) between markers; a second run replaces the block.")] = None,
           skill: Annotated[bool, Option(
               "--skill", help="The SKILL.md for agent hosts with skills instead (with --write: the whole file).")] = False,
           json: JsonOpt = False) -> None:
    """Instructions for agents: which command when, exit codes, error codes, reading a refusal."""
    from statedir.api import texts
    from statedir.cli.render import emit_json

    text = texts.agents_skill() if skill else texts.agents_guide()
    if write is None:
        if json:
            emit_json({"text": text})
        else:
            print(text, end="")
        return
    result = texts.write_instructions(write, text, whole=skill)
    if json:
        emit_json(result)
    else:
        print(f"ok  {result['action']} {result['file']}")

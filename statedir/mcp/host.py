"""What the MCP server is given to serve (`Host`): the command table (its tools' schemas; a call
calls the API the table names) and how it opens the store. The command table is the CLI's (its
command modules declare the commands), so whoever starts a server hands it over: `statedir mcp`
(statedir.cli.agents), a test or a benchmark, each as `mcp_host(command_table())`. No MCP SDK here."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statedir.api import StateDir, places
from statedir.commands import table

_WARNED: set[str] = set()  # the store's standing warnings said on stderr already: each once a process


@dataclass(frozen=True)
class Host:
    """What the server is lent (it imports nothing of the CLI): the command table (the tools'
    schemas, and the API each command's call is) and how the store is opened."""

    commands: tuple[table.Command, ...]
    open_store: Callable[[Path], Any]


def mcp_host(commands: tuple[table.Command, ...]) -> Host:
    """The server's host for the CLI's `commands` (statedir.cli.registry.command_table), opening
    the store as the command line does (open_store)."""
    return Host(commands=commands, open_store=open_store)


def open_store(root: Path) -> StateDir:
    """The StateDir at `root` (a repository root means its state/, as `--store` takes it), with
    STATEDIR_LOCK_TIMEOUT and ARS_PASSPORT_RESET applied as the command line applies them; its
    standing warnings (a merge driver not registered) said on stderr, never on the protocol's stdout."""
    raw = os.environ.get("STATEDIR_LOCK_TIMEOUT")
    opened = StateDir(places.store_at(root), lock_timeout=places.lock_timeout(raw, "STATEDIR_LOCK_TIMEOUT") if raw
                      else None, reset_boundaries=os.environ.get("ARS_PASSPORT_RESET") == "1")
    for message in opened.store.standing:
        if message not in _WARNED:
            _WARNED.add(message)
            sys.stderr.write(f"warning: {message}\n")
    return opened

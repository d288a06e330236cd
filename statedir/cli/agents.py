"""Commands for agent hosts: the MCP server and the instructions agents follow."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from statedir.cli import app
from statedir.cli.common import StoreOpt, store_path


@app.command()
def mcp(store: StoreOpt = None) -> None:
    """Serve the store to an agent host over MCP on stdio (needs `pip install 'statedir[mcp]'`).

    One tool per command, results the --json documents, errors carrying statedir's codes;
    write tools take expect_head. Nothing but protocol goes to stdout.
    """
    from statedir.errors import MissingDependency

    root = store_path(store)
    try:
        from statedir.mcp import server
    except ImportError as exc:
        raise MissingDependency(f"the MCP SDK is not installed ({exc.name}): pip install 'statedir[mcp]'") from None
    server.serve(root)

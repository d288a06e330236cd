"""The MCP server over stdio (the official SDK's low-level Server): the only module that
imports the SDK. Tool calls run one at a time in a worker thread, on one store kept open."""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

import statedir
from statedir.mcp.calls import Host, Served

INSTRUCTIONS = (
    "statedir keeps this pipeline's state; every write is one git commit and may be refused by the rules. "
    "Results are the CLI's --json documents; a refusal is a tool error {error: {code, message, details}}. "
    "Pass expect_head (the commit of your last write, or HEAD from an error's details) to write only on the "
    "state you saw: a write is refused (HEAD_MOVED) only if its run or bus session changed after it."
)
HEAD_META = "statedir/head"  # the result's _meta key holding the repository's HEAD after the call
EXIT_META = "statedir/exit_code"  # and the exit code the CLI would have given


def build(root: Path, host: Host) -> Server[Any]:
    """An MCP server for the store at `root`, its tools generated from the CLI's commands."""
    served = Served(root, host)
    listed = [types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema,
                         annotations=types.ToolAnnotations(read_only_hint=tool.read_only, open_world_hint=False))
              for tool in served.tools.values()]
    one_at_a_time = anyio.Lock()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        async with one_at_a_time:
            outcome = await anyio.to_thread.run_sync(served.call, params.name, params.arguments)
        meta = {HEAD_META: outcome.head, EXIT_META: outcome.exit_code}
        return types.CallToolResult(content=[types.TextContent(text=outcome.text)], is_error=outcome.is_error,
                                    _meta=meta)

    return Server("statedir", version=statedir.__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve(root: Path, host: Host) -> None:
    """Serve the store on stdin/stdout until the client closes stdin or goes away; logs go to stderr."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="statedir mcp: %(levelname)s %(message)s")
    server = build(root, host)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    except* (BrokenPipeError, ConnectionResetError):
        # The client went away mid-call: the call ran to its end, only its reply is lost, and a
        # traceback in the host's log would report a fault that is not the server's.
        logging.getLogger("statedir.mcp").warning("the client closed the connection; stopping")

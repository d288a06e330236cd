"""Helpers for the MCP tests: a client on an in-process server, results read as the CLI's JSON."""
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client

from statedir.cli.common import mcp_host
from statedir.mcp.server import HEAD_META, build


class ToolError(Exception):
    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__(doc)
        self.code = doc["error"]["code"]
        self.doc = doc


class Agent:
    """An MCP client as an agent uses it: call a tool, get the JSON, a refusal raised as ToolError."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.head: str | None = None

    async def raw(self, name: str, **arguments: Any) -> Any:
        return await self.client.call_tool(name, arguments)

    async def __call__(self, name: str, **arguments: Any) -> Any:
        result = await self.raw(name, **arguments)
        self.head = (result.meta or {}).get(HEAD_META)
        text = result.content[0].text
        doc = json.loads(text) if text else None
        if result.is_error:
            raise ToolError(doc)
        return doc


@asynccontextmanager
async def agent(store: Path, mode: str = "auto") -> AsyncIterator[Agent]:
    async with Client(build(store, mcp_host()), mode=mode) as client:
        yield Agent(client)

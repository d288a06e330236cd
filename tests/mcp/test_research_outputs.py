"""The research tools' output schemas (statedir.mcp.research_outputs): `research_query`'s records are
described by kind, and what it finds is returned as structured content."""
from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client

from statedir import api
from statedir.cli.registry import command_table
from statedir.mcp.host import mcp_host
from statedir.mcp.server import build


def test_research_query_s_records_are_described_by_kind(repo: Path, sd: api.StateDir) -> None:
    async def main() -> None:
        host = mcp_host(command_table())
        async with Client(build(repo / "state", host, ("research",))) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in (await client.list_tools()).tools}
            runs = tools["research_query"].output_schema["properties"]["runs"]["items"]
            assert {"id", "skill", "status", "started_at"} <= set(runs["properties"])
            assert runs["properties"]["status"]["enum"] == ["running", "completed", "failed"]
            source = await client.call_tool("research_create_source", {"title": "A", "doi": "10.1/x"})
            found = await client.call_tool("research_query", {"source_id": source.structured_content["id"]})
            assert not found.is_error and found.structured_content["sources"][0]["doi"] == "10.1/x"
    anyio.run(main)

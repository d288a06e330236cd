"""A bus session's shape can be read from the server before an agent writes (the resource
statedir://bus/schema, named in the bus tools' descriptions), and a write that misses it says which
call would do it; over stdio, as a host runs the server."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

from statedir import api
from tests.support.util import snapshot

SESSION = "2026-06-30-shape"


@pytest.mark.slow  # a server process over stdio
def test_the_session_schema_is_a_resource_and_a_write_missing_it_names_the_call(repo: Path, sd: api.StateDir) -> None:
    store = repo / "state"
    server = StdioServerParameters(command=sys.executable, args=["-m", "statedir", "mcp", "--store", str(store),
                                                                 "--tools", "bus"], env=dict(os.environ))

    async def main() -> None:
        async with Client(server) as client:
            listed = {r.uri: r for r in (await client.list_resources()).resources}
            assert "statedir://bus/schema" in {str(uri) for uri in listed}
            shape = json.loads((await client.read_resource("statedir://bus/schema")).contents[0].text)
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for verb in ("bus_set", "bus_append"):
                assert "statedir://bus/schema" in tools[verb].input_schema["properties"]["field"]["description"]
            await client.call_tool("bus_init", {"session": SESSION})
            before = snapshot(repo)
            appended = await client.call_tool("bus_append", {"session": SESSION, "field": "phases.1-design.outputs",
                                                             "value": "docs/design.md"})
            error = json.loads(appended.content[0].text)["error"]
            assert appended.is_error and error["code"] == "VALIDATION_FAILED"
            assert (f"`bus_set {{session: {SESSION}, field: phases.1-design.outputs.NAME, value: VALUE}}`"
                    in error["message"]), error["message"]
            invented = await client.call_tool("bus_set", {"session": SESSION, "field": "phases.1-design.notes",
                                                          "value": "x"})
            message = json.loads(invented.content[0].text)["error"]["message"]
            assert invented.is_error and "agent, status, outputs, evidence, work_items" in message, message
            assert "statedir://bus/schema" in message
            assert snapshot(repo) == before  # refused writes change nothing
            done = await client.call_tool("bus_set", {"session": SESSION, "field": "phases.1-design.outputs.design",
                                                      "value": "docs/design.md"})
            assert not done.is_error
            for n in (1, 2):  # an append answers with what it added and the list's length, not the list
                grown = (await client.call_tool("bus_append", {"session": SESSION, "field": "phases.1-design.evidence",
                                                               "value": f".ai_log/{n}.md"})).structured_content
                assert (grown["value"], grown["length"]) == (f".ai_log/{n}.md", n), grown
                assert not any(isinstance(v, list) for v in grown.values()), grown
            session = (await client.call_tool("bus_get", {"session": SESSION})).structured_content["result"]
            jsonschema.validate(session, shape)  # what the server wrote is what the resource says
            assert session["phases"]["1-design"]["outputs"] == {"design": "docs/design.md"}
    anyio.run(main)

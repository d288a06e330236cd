"""Helpers for the MCP tests: a client on an in-process server, results read as the CLI's JSON."""
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types
from mcp import Client

from statedir.cli.registry import command_table
from statedir.mcp import outputs
from statedir.mcp.host import mcp_host
from statedir.mcp.server import HEAD_META, build

# A server whose callers act in every role the academic pipeline's agents have (`statedir mcp --role ...`).
AGENT_ROLES = ("pipeline_orchestrator", "integrity_verification", "collaboration_depth_agent")


def document(result: Any) -> Any:
    """What a call returned, as the CLI's --json prints it: a refusal's error document (its text),
    else the structured content (the text is one line saying what it holds), a wrapped value
    (`{"result": ...}`, `{"text": ...}`) unwrapped."""
    if result.is_error:
        return json.loads(result.content[0].text) if result.content[0].text else None
    doc = result.structured_content
    if isinstance(doc, dict) and len(doc) == 1 and ("result" in doc or "text" in doc):
        return next(iter(doc.values()))
    return doc


class ToolError(Exception):
    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__(doc)
        self.code = doc["error"]["code"]
        self.doc = doc


class Agent:
    """An MCP client as an agent uses it: call a tool, get the JSON, a refusal raised as ToolError.
    Every result is held to its tool's output schema, and must declare every field it returns."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.head: str | None = None
        self.schemas: dict[str, dict[str, Any]] = {}

    async def raw(self, name: str, **arguments: Any) -> Any:
        return await self.client.call_tool(name, arguments)

    async def __call__(self, name: str, **arguments: Any) -> Any:
        result = await self.raw(name, **arguments)
        self.head = (result.meta or {}).get(HEAD_META)
        doc = document(result)
        if result.is_error:
            raise ToolError(doc)
        await self.keeps_to_its_schema(name, result.structured_content)
        return doc

    async def keeps_to_its_schema(self, name: str, content: dict[str, Any] | None) -> None:
        """The result fits its tool's output schema, and the schema names each field the result has
        (a field the schema leaves out, or names under another spelling, is a schema that lies)."""
        if not self.schemas:
            self.schemas = {t.name: t.output_schema or {} for t in (await self.client.list_tools()).tools}
        schema = self.schemas.get(name, {})
        assert content is not None, name
        jsonschema.validate(content, schema)
        declared = schema.get("properties")
        if declared and schema.get("additionalProperties") is not True:  # true: an open document (`show`)
            # a transition's common fields are named once, in the server's instructions (outputs.COMMON)
            common = set(outputs.COMMON) if name in outputs.TRANSITIONS else set()
            assert set(content) <= set(declared) | common, (name, sorted(set(content) - set(declared) - common))


class User:
    """The person behind the client, answering the server's questions (elicitation): `action`
    accept, decline or cancel; an accepted form takes `answers`, else a field's default, else its
    first choice (the user picks one: the form presets no response)."""

    def __init__(self, action: str = "accept", **answers: str) -> None:
        self.action = action
        self.answers = answers
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        if self.action != "accept":
            return types.ElicitResult(action=self.action)
        fields = params.requested_schema["properties"]
        content = {name: spec["default"] if "default" in spec else spec["enum"][0] for name, spec in fields.items()}
        return types.ElicitResult(action="accept", content={**content, **self.answers})


@asynccontextmanager
async def agent(store: Path, mode: str = "auto", user: User | None = None, roles: tuple[str, ...] | None = None,
                client_info: types.Implementation | None = None, client_name: str | None = None) -> AsyncIterator[Agent]:
    """An agent's client on an in-process server; with `user`, a client that can ask its user; `roles`
    the server's (`statedir mcp --role`; default its own default), `client_info` the handshake's."""
    asks: dict[str, Any] = {"elicitation_callback": user} if user is not None else {}
    if client_info is not None:
        asks["client_info"] = client_info
    host = mcp_host(command_table())
    server = build(store, host, roles=roles, client_name=client_name) if roles else build(
        store, host, client_name=client_name)
    async with Client(server, mode=mode, **asks) as client:  # type: ignore[arg-type]
        yield Agent(client)

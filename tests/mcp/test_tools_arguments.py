"""Property: for every tool the server lists, a call with a required argument left out, null or
empty, or any argument of the wrong JSON type, is refused with INVALID_VALUE naming one of them;
HEAD stays where it was and every file of the repository keeps its bytes. Driven through the
SDK's client on an in-process server, the calls' arguments drawn from the listed input schemas."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from statedir import api
from statedir.cli.registry import command_table
from statedir.gitops import git
from statedir.mcp.host import mcp_host
from statedir.mcp.server import build
from tests.support.mcp_session import document
from tests.support.util import snapshot

pytestmark = pytest.mark.slow  # a property search over every tool, each call through the protocol

SESSION = "2026-06-30-handoff"
# Values a command accepts for arguments of these names in the store below: a call whose later
# arguments moved into the slot of one left out would often be accepted, and commit.
PLAUSIBLE: dict[str, list[str]] = {
    "run_id": ["r1"], "session": [SESSION], "field": ["owner", "topic"], "value": ["owner", "x"],
    "stage": ["1", "2"], "status": ["in_progress", "completed"], "path": ["topic", "current_stage"],
    "start": ["HEAD~1"], "end": ["HEAD"], "names": ["rq_brief"], "material": ["rq_brief"], "reason": ["why"],
    "state": ["paused"], "verdict": ["PASS"], "to": ["HEAD~1"], "output": ["notes"], "topic": ["T"],
}
SCALARS = st.one_of(st.integers(-3, 3), st.floats(-2.5, 2.5, allow_nan=False), st.booleans(), st.just("3"),
                    st.just({"a": 1}))


def plausible(name: str, prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = prop["type"]
    if kind == "array":
        return st.lists(plausible(name, prop["items"]), min_size=1, max_size=2)
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        return st.integers(0, 3)
    return st.sampled_from([*PLAUSIBLE.get(name, []), "x", "1"])


def wrong(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A JSON value not of the property's type (a list of wrong items for a list)."""
    kind = prop["type"]
    if kind == "array":
        return st.one_of(st.just("rq_brief"), st.lists(wrong(prop["items"]), min_size=1, max_size=2))
    if kind == "number":
        return st.one_of(st.booleans(), st.just("3"), st.just([1]))
    allowed = {"string": str, "integer": int, "boolean": bool}[kind]

    def off_type(value: Any) -> bool:
        return not isinstance(value, allowed) or (kind == "integer" and isinstance(value, bool))

    return st.one_of(SCALARS.filter(off_type), st.lists(st.just("x"), min_size=1, max_size=1))


@st.composite
def refused_call(draw: st.DrawFn, schema: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """Arguments with at least one wrong (the names of the wrong ones): a required argument left
    out, null or an empty list, or any argument of the wrong type; the rest plausible or absent."""
    props: dict[str, Any] = schema["properties"]
    required = schema.get("required", [])
    faults = [(name, "wrong") for name in props]
    faults += [(name, fault) for name in required for fault in ("omit", "null")]
    faults += [(name, "empty") for name in required if props[name]["type"] == "array"]
    chosen = draw(st.lists(st.sampled_from(faults), min_size=1, max_size=2, unique_by=lambda f: f[0]))
    arguments: dict[str, Any] = {}
    for name, prop in props.items():
        if name in required:
            arguments[name] = draw(plausible(name, prop))
        elif name != "expect_head":
            presence = draw(st.sampled_from(["given", "given", "null", "absent"]))  # null: left out
            if presence != "absent":
                arguments[name] = draw(plausible(name, prop)) if presence == "given" else None
    for name, fault in chosen:
        if fault == "omit":
            del arguments[name]
        elif fault == "wrong":
            arguments[name] = draw(wrong(props[name]))
        else:
            arguments[name] = None if fault == "null" else []
    return arguments, {name for name, _ in chosen}


def refuses_every_wrong_call(call_tool: Any, name: str, schema: dict[str, Any], repo: Path, head: str | None,
                             saved: dict[str, bytes]) -> None:
    @settings(max_examples=10, deadline=None, database=None)
    @given(call=refused_call(schema))
    def refused(call: tuple[dict[str, Any], set[str]]) -> None:
        arguments, faulty = call
        result = call_tool(name, arguments)  # a crash of the server raises here
        doc = document(result)
        assert result.is_error, (name, arguments, doc)
        assert set(doc["error"]) == {"code", "message", "details"}, doc
        assert doc["error"]["code"] == "INVALID_VALUE", (name, arguments, doc)
        details = doc["error"]["details"]
        assert details.get("argument") in faulty and set(details.get("arguments", [])) <= faulty, (name, doc)
        assert git.head(repo) == head == result.meta["statedir/head"], (name, arguments)
        assert snapshot(repo) == saved, (name, arguments)

    refused()


def test_refused_arguments_change_nothing_on_any_tool(repo: Path) -> None:
    store = repo / "state"
    api.init(store)
    sd = api.StateDir(store)
    sd.new("r1", topic="T")
    sd.stage("r1", "1", "in_progress")
    sd.bus(SESSION).init()
    head = git.head(repo)
    saved = snapshot(repo)

    with anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(Client(build(store, mcp_host(command_table())))) as client:
        listed = portal.call(client.list_tools).tools
        assert len(listed) > 30

        for tool in (t for t in listed if t.input_schema["properties"]):  # `runs` takes nothing to get wrong
            refuses_every_wrong_call(lambda name, arguments: portal.call(client.call_tool, name, arguments),
                                     tool.name, tool.input_schema, repo, head, saved)
        assert not portal.call(client.call_tool, "status", {"run_id": "r1"}).is_error  # still serving

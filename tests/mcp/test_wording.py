"""What an MCP agent reads names tools and results, never the command line's exit codes,
printing, repeated flags, docs folder or `statedir X`: every tool's description and its arguments',
NOT_A_STORE's fix, what blocks a move (`needs`) in `next` and in a refusal's details, and a size
refusal naming the tool and the argument as its schema spells it."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from statedir import api
from statedir.cli.registry import command_table
from statedir.engine.template import prose
from statedir.hints import WORDS
from statedir.mcp.calls import Served
from statedir.mcp.host import mcp_host
from statedir.mcp.wording import McpWords
from tests.support.mcp_session import AGENT_ROLES, ToolError, agent
from tests.support.util import snapshot

CLI_WORDS = re.compile(r"exit [0-9]|exits [0-9]|\bprints?\b|\(repeatable\)|docs/|statedir |`init` prints")


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one, not made by init again)."""
    return repo / "state"


def test_no_tool_description_speaks_the_command_lines_words(store: Path) -> None:
    async def main() -> list[Any]:
        async with agent(store) as a:
            return list((await a.client.list_tools()).tools)
    tools = anyio.run(main)
    said = {(t.name, "description"): t.description or "" for t in tools}
    said.update({(t.name, arg): prop.get("description", "") for t in tools
                 for arg, prop in t.input_schema["properties"].items()})
    assert len(said) > 100
    wrong = {where: CLI_WORDS.search(text).group(0) for where, text in said.items() if CLI_WORDS.search(text)}
    assert wrong == {}
    by_name = {t.name: t for t in tools}
    assert "is_error" not in by_name["prereq"].description and "not an error" in by_name["prereq"].description
    assert "`bus_init`" in by_name["bus_set"].input_schema["properties"]["session"]["description"]


def test_not_a_store_says_to_call_the_init_tool(repo: Path) -> None:
    async def main() -> None:
        async with agent(repo / "not-yet") as a:
            with pytest.raises(ToolError) as caught:
                await a("runs")
            message = caught.value.doc["error"]["message"]
            assert caught.value.code == "NOT_A_STORE" and "call the tool `init`" in message
            assert "directory" not in message and "statedir " not in message.replace("statedir store", "")
    anyio.run(main)


def test_what_blocks_a_move_names_the_tool_that_unblocks_it(store: Path) -> None:
    """A template's completion message (the academic stage 4's "(statedir revision)", 4.5's
    "`statedir integrity`", 3's "(--decision)") is said in the tools' words where the refusal is
    made, and so reaches a refusal's message and `needs` and `next`'s blocked moves."""
    served = Served(store, mcp_host(command_table()))
    said = WORDS.set(McpWords(served.wording, "stage"))
    try:
        needs = [prose.worded("its revision round recorded (statedir revision)"),
                 prose.worded("a PASS, recorded with `statedir integrity`; or (statedir resolve)"),
                 prose.worded("needs a review decision (--decision)")]
    finally:
        WORDS.reset(said)
    assert needs == ["its revision round recorded (revision)", "a PASS, recorded with `integrity`; or (resolve)",
                     "needs a review decision (decision)"]
    assert prose.worded("needs a review decision (--decision), then (statedir revision)") == (
        "needs a review decision (decision=), then (sd.revision())")  # a Python caller's words


def test_a_size_refusal_names_the_tool_and_its_own_argument(sd: api.StateDir, repo: Path) -> None:
    """Over MCP a size refusal names the argument as the tool's schema spells it (`output`, not the
    API's `outputs`) and the tool, never a Python function (`stage(): outputs`, `record_result():`)."""
    sd.new("p", topic="T")
    sd.stage("p", "1", "in_progress")
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(repo / "state", roles=AGENT_ROLES) as a:
            for tool, arguments, argument in [
                    ("stage", {"stage": "1", "status": "in_progress", "output": ["o"] * 300}, "output"),
                    ("material", {"names": ["rq_brief"], "file": ["y" * 70_000]}, "file"),
                    ("checklist", {"stage": "2.5", "item": ["1=CLEAR"] * 300}, "item"),
                    ("integrity", {"stage": "2.5", "verdict": "PASS", "refs_total": 1, "refs_verified": 1,
                                   "issue": ["MAJOR:X:y"] * 300, "actor": "integrity_verification"}, "issue"),
                    ("show", {"run_id": "x" * 70_000}, "run_id")]:
                with pytest.raises(ToolError) as caught:
                    await a(tool, **{"run_id": "p", **arguments})
                error = caught.value.doc["error"]
                assert error["details"]["argument"] == argument, (tool, error)
                assert error["message"].startswith(f"{tool}: {argument} "), (tool, error)
    anyio.run(main)
    assert snapshot(repo) == saved

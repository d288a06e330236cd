"""statedir.mcp.wording.McpWords: over MCP a refusal's next step (statedir.hints) is the tool to
call and its arguments, said from the refusal's data; an option is the tool's argument."""
from __future__ import annotations

from pathlib import Path

import anyio

from statedir import api
from statedir.cli.registry import command_table
from statedir.hints import DOCTOR_FIX, SYNC_REPLAY, Hint
from statedir.mcp.calls import Served
from statedir.mcp.host import mcp_host
from statedir.mcp.wording import McpWords
from tests.support.mcp_session import ToolError, agent


def test_a_hint_is_a_tool_call(sd: api.StateDir, repo: Path) -> None:
    words = McpWords(Served(repo / "state", mcp_host(command_table())).wording, "material")
    assert words.hint(DOCTOR_FIX) == "doctor {fix: true}" and words.hint(SYNC_REPLAY) == "sync {replay: true}"
    assert words.hint(Hint("set", {"run_id": "r1", "field": "topic", "value": "x", "expect": "abc"})) == \
        "set {run_id: r1, field: topic, value: x, expect_head: abc}"
    assert words.hint(Hint("runs")) == "runs"
    assert words.option("file") == "file" and words.option("expect") == "expect_head"
    # an option's placeholder that only names the argument again is dropped, as the translation drops it
    assert words.fill("pass {opt:passport} FILE and {opt:file} F", ()) == "pass passport and file F"


def test_a_tool_call_words_its_refusal_for_the_agent(sd: api.StateDir, repo: Path) -> None:
    async def main() -> ToolError:
        async with agent(repo / "state") as a:
            try:
                await a("show", run_id="nope")
            except ToolError as refused:
                return refused
        raise AssertionError("show of no run was not refused")

    refused = anyio.run(main)
    assert refused.code == "UNKNOWN_RUN"
    assert refused.doc["error"]["message"] == "no run 'nope' in this store; see `runs`"
    assert refused.doc["error"]["details"]["hints"] == [{"command": "runs", "args": {}}]

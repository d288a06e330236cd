"""The research ledger over MCP: one tool per action, each with only its own arguments (enums where
the ledger has a vocabulary), refusals in the common {error: {code, message, details}} shape; the
CLI's `research` keeps the seed's flat errors."""
from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from statedir import api
from statedir.cli.registry import command_table
from statedir.mcp import served_tools
from statedir.mcp.host import mcp_host
from statedir.mcp.research_tools import ACTIONS
from statedir.research.actions import ACTIONS as CLI_ACTIONS
from tests.support.mcp_session import ToolError, agent
from tests.support.util import cli, cli_json, snapshot


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one, not made by init again)."""
    return repo / "state"


def test_every_research_action_is_a_tool_and_the_flat_tool_is_gone() -> None:
    served = served_tools.served(mcp_host(command_table()).commands)
    assert "research" not in served
    assert set(ACTIONS) == set(CLI_ACTIONS)
    research = {name: tool for name, tool in served.items() if name.startswith("research_")}
    assert set(research) == {"research_" + a.replace("-", "_") for a in CLI_ACTIONS}
    for name, tool in research.items():
        schema = tool.input_schema
        text = json.dumps(schema) + tool.description
        assert "--" not in text, name  # no CLI flag in what the agent reads
        assert len(json.dumps(schema)) < 1500, name  # the whole flat tool was 5.6 kB
        assert not any(p.get("type") == "boolean" and p.get("description", "").startswith("Action")
                       for p in schema["properties"].values()), name
        assert ("expect_head" in schema["properties"]) == (not tool.read_only), name
    start = research["research_start_run"].input_schema
    assert start["required"] == ["skill"] and "statement" not in start["properties"]
    assert research["research_complete_run"].input_schema["properties"]["status"]["enum"] == ["completed", "failed"]
    assert research["research_create_evidence"].input_schema["properties"]["stance"]["enum"] == [
        "supports", "refutes", "mixed"]
    assert research["research_validate"].input_schema["properties"] == {}


def test_a_research_run_through_its_tools(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            run = await a("research_start_run", skill="deep-research", question="Does X cause Y?")
            claim = await a("research_record_claim", run_id=run["id"], statement="X causes Y", confidence="low",
                            evidence="doi:10/xyz")
            assert claim["run_id"] == run["id"]
            closed = await a("research_complete_run", run_id=run["id"], status="completed")
            assert closed["status"] == "completed"
            found = await a("research_query", run_id=run["id"])
            assert found["claims"][0]["statement"] == "X causes Y"
            assert (await a("research_validate")) is not None
    anyio.run(main)


def test_a_record_an_agent_makes_without_a_skill_names_the_servers_role(store: Path, repo: Path) -> None:
    """created_by falls back to the role acting (the server's), never to `user`, whose default
    is the person at a terminal (state.py's); the CLI without --actor keeps it."""
    async def main() -> None:
        async with agent(store) as a:
            made = await a("research_create_source", title="A paper", doi="10.5/agent")
            assert made["created_by"] == "pipeline_orchestrator", made
    anyio.run(main)
    code, out = cli_json("research", "--create-project", "--name", "P", cwd=repo)
    assert code == 0 and out["created_by"] == "user", out  # type: ignore[index]


def test_research_refusals_have_the_common_shape_and_change_nothing(store: Path, repo: Path) -> None:
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(store) as a:
            cases = [("research_complete_run", {"run_id": "run_nowhere", "status": "completed"}, "UNKNOWN_RUN"),
                     ("research_start_run", {"question": "Q"}, "INVALID_VALUE"),  # skill left out
                     ("research_start_run", {"skill": "  "}, "INVALID_VALUE"),
                     ("research_complete_run", {"run_id": "r", "status": "completed", "statement": "x"},
                      "INVALID_VALUE"),  # not this action's argument
                     ("research_query", {"run_id": "a", "question_id": "b"}, "INVALID_VALUE")]
            for name, arguments, code in cases:
                with pytest.raises(ToolError) as refused:
                    await a(name, **arguments)
                error = refused.value.doc["error"]
                assert set(error) == {"code", "message", "details"} and error["code"] == code, (name, error)
                assert "--" not in error["message"], error  # the ledger's flags in the tools' words
            with pytest.raises(ToolError) as refused:
                await a("research_start_run", question="Q")
            assert refused.value.doc["error"]["details"] == {"argument": "skill"}
            with pytest.raises(ToolError) as refused:
                await a("research_start_run", skill="s", question="Q", question_id="q1")
            assert refused.value.doc["error"]["message"] == "question and question_id are mutually exclusive"
            with pytest.raises(ToolError) as refused:
                await a("research_query", run_id="a", question_id="b")
            assert "research_query takes exactly one of run_id, question_id" in refused.value.doc["error"]["message"]
    anyio.run(main)
    assert snapshot(repo) == saved


def test_the_cli_keeps_the_seeds_flat_error(store: Path) -> None:
    proc = cli("research", "--complete-run", "--run-id", "run_nowhere", "--status", "completed", "--store",
               str(store))
    doc = json.loads(proc.stdout)
    assert proc.returncode != 0 and doc["error"] == "UNKNOWN_RUN" and isinstance(doc["message"], str)


def test_research_tools_say_what_they_take_and_what_they_made(store: Path) -> None:
    """A status lists only the values its tool takes; artifact_role says what it is (free by design);
    research_start_run says which records it made besides the Run."""
    async def main() -> None:
        async with agent(store) as a:
            tools = {t.name: t.input_schema["properties"] for t in (await a.client.list_tools()).tools}
            for name in ("research_complete_run", "research_set_hypothesis_status", "research_set_experiment_status"):
                status = tools[name]["status"]
                assert status["description"] == ", ".join(status["enum"]) + ".", (name, status)
            assert "resource-resolver role" in tools["research_record_result"]["artifact_role"]["description"]
            made = await a("research_start_run", skill="deep-research", question="Does it hold?")
            assert made["created"] == [made["question_id"], made["hypothesis_id"], made["experiment_id"]]
            alone = await a("research_start_run", skill="deep-research")
            assert "created" not in alone  # a standalone Run makes nothing beside it
            on_experiment = await a("research_start_run", skill="s", experiment_id=made["experiment_id"])
            assert "created" not in on_experiment
    anyio.run(main)

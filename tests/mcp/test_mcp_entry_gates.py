"""Over MCP: a compliance block is the user's to acknowledge, never an agent's: asked of the user
through elicitation, refused to a client that cannot ask (issue 33, point 3)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import copy_of, snapshot, trailers
from mcp_session import ToolError, User, agent
from test_entry_gates import at_2_5

from statedir import api
from statedir.store import run_logs


def test_a_compliance_block_is_never_acknowledged_over_mcp(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("compliance-systematic", lambda s: at_2_5(s, mode="systematic-review"), repo, tmp_path_factory)[0]
    sd.compliance("r", "2.5", report=str(repo / "block.json"), actor="compliance_agent")
    before = snapshot(repo)

    async def main() -> None:
        async with agent(repo / "state") as a:
            with pytest.raises(ToolError) as caught:
                await a("compliance", run_id="r", stage="2.5", override=True, reason="fine")
            assert caught.value.code == "USER_ANSWER_REQUIRED"

    anyio.run(main)
    assert snapshot(repo) == before


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_compliance_block_is_acknowledged_by_the_user_asked_through_elicitation(
        repo: Path, tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    sd = copy_of("compliance-systematic", lambda s: at_2_5(s, mode="systematic-review"), repo, tmp_path_factory)[0]
    sd.compliance("r", "2.5", report=str(repo / "block.json"), actor="compliance_agent")
    user = User(override="acknowledge", reason="the PRISMA item is met in the appendix")

    async def main() -> dict[str, Any]:
        async with agent(repo / "state", mode, user) as a:
            return await a("compliance", run_id="r", stage="2.5", override=True,  # type: ignore[no-any-return]
                           reason="the agent's own words")

    done = anyio.run(main)
    assert done["decision"] == "override" and done["override_round"] == 1
    [asked] = user.asked
    assert "block" in asked.message and "yours to decide" in asked.message and "block.json" in asked.message
    assert asked.requested_schema["properties"]["override"]["enum"] == ["acknowledge"]
    entry = sd.show("r")["passports"]["paper_draft_v1"]["compliance_history"][-1]["user_override"]
    assert (entry["answered_by"], entry["via"], entry["reason"]) == (
        "user", "pipeline_orchestrator", "the PRISMA item is met in the appendix")
    said = trailers(repo)
    assert (said["Statedir-Answered-By"], said["Statedir-Channel"]) == ("user", "mcp-elicitation")
    (receipt,) = run_logs.read(sd.store, sd.store.run_dir("r"), "compliance_override_action_receipt")
    assert receipt["channel"] == "mcp-elicitation" and receipt["via"] == "pipeline_orchestrator"
    sd.stage("r", "2.5", "completed")  # acknowledged: the stage completes
    assert api.StateDir(repo / "state").verify()["clean"]


def test_a_declined_compliance_question_changes_nothing(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("compliance-systematic", lambda s: at_2_5(s, mode="systematic-review"), repo, tmp_path_factory)[0]
    sd.compliance("r", "2.5", report=str(repo / "block.json"), actor="compliance_agent")
    before = snapshot(repo)

    async def main() -> None:
        async with agent(repo / "state", user=User("decline")) as a:
            with pytest.raises(ToolError) as caught:
                await a("compliance", run_id="r", stage="2.5", override=True, reason="fine")
            assert caught.value.code == "USER_DECLINED"

    anyio.run(main)
    assert snapshot(repo) == before

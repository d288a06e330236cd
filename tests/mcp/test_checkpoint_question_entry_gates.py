"""Over MCP: a compliance block is the user's to acknowledge, never an agent's: asked of the user
through elicitation, refused to a client that cannot ask (issue 33, point 3)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from statedir import api
from statedir.store import run_logs
from tests.support.mcp_session import ToolError, User, agent
from tests.support.runs import at_2_5, through_4_5
from tests.support.util import copy_of, snapshot, trailers


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


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_stage_5_entry_asks_the_user_for_the_citation_style(
        repo: Path, tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    sd = copy_of("entry-gates-at-5", through_4_5, repo, tmp_path_factory)[0]
    user = User(response="continue", format="ieee")

    async def main() -> dict[str, Any]:
        async with agent(repo / "state", mode, user) as a:  # the agent's own style is not the user's
            return await a("confirm", run_id="r", response="continue", format="apa7")  # type: ignore[no-any-return]

    anyio.run(main)
    [asked] = user.asked
    fields = asked.requested_schema["properties"]
    assert fields["format"]["enum"] == ["apa7", "chicago", "mla", "ieee", "vancouver", "harvard"]
    assert "format" in asked.requested_schema["required"] and "default" not in fields["format"]
    assert "which citation style" in asked.message
    assert sd.show("r")["stages"]["5"]["answers"] == {"citation_style": "ieee"}
    receipt = run_logs.read(sd.store, sd.store.run_dir("r"), "mandatory_checkpoint_response")[-1]
    assert receipt["stage"] == "4.5" and receipt["answer"] == {"citation_style": "ieee"}
    assert receipt["answered_by"] == "user"
    assert trailers(repo)["Statedir-Channel"] == "mcp-elicitation"


def test_a_style_the_form_does_not_take_changes_nothing(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    copy_of("entry-gates-at-5", through_4_5, repo, tmp_path_factory)
    before = snapshot(repo)

    async def main() -> None:
        async with agent(repo / "state", user=User(response="continue", format="mla8")) as a:
            with pytest.raises(ToolError) as caught:
                await a("confirm", run_id="r", response="continue")
            assert caught.value.code == "INVALID_VALUE" and "format" in caught.value.doc["error"]["details"]["fields"]

    anyio.run(main)
    assert snapshot(repo) == before

"""Over MCP: a compliance block is the user's to acknowledge, never an agent's (issue 33, point 3)."""
from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from conftest import copy_of, snapshot
from mcp_session import ToolError, agent
from test_entry_gates import at_2_5


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

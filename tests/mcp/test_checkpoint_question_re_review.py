"""Over MCP, after a failed re-review check (stage 3' decision user_review_required, academic-
pipeline 3.23) the checkpoint's form asks the user for their pick of the decision, not the next
stage: the agent's own pick never fills it, and the user's is recorded as stage 3''s decision."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from statedir.store import run_logs
from tests.support.mcp_session import User, agent
from tests.support.runs import awaiting_the_user
from tests.support.util import copy_of, trailers


def test_the_user_picks_the_decision_in_the_form(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("re-review-user-answer", awaiting_the_user, repo, tmp_path_factory)[0]
    user = User(response="continue", decision="major_revision")

    async def main() -> dict[str, Any]:
        async with agent(repo / "state", user=user) as a:  # the agent's own pick is not the user's
            return await a("confirm", run_id="r1", response="continue", decision="accept")  # type: ignore[no-any-return]

    done = anyio.run(main)
    assert done["next"] == "4p"
    [asked] = user.asked
    fields = asked.requested_schema["properties"]
    assert fields["decision"]["enum"] == ["accept", "minor_revision", "major_revision"]
    assert "next" not in fields and "decision" in asked.requested_schema["required"]
    assert "the re-review left it to them" in asked.message
    assert sd.show("r1")["stages"]["3p"]["decision"] == "major_revision"
    receipt = run_logs.read(sd.store, sd.store.run_dir("r1"), "mandatory_checkpoint_response")[-1]
    assert receipt["stage"] == "3p" and receipt["answer"] == {"decision": "major_revision"}
    assert receipt["answered_by"] == "user" and trailers(repo)["Statedir-Channel"] == "mcp-elicitation"

"""Advice an agent follows literally leads the right way: `next` names the optional arguments that
change what a move records, a revision round recorded without `items_addressed` says so, and a
material file git does not track is warned of."""
from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from statedir import api
from statedir.cli.registry import command_table
from statedir.mcp import catalog
from statedir.mcp.host import mcp_host
from statedir.mcp.server import build
from tests.support.mcp_session import ToolError, User, agent
from tests.support.runs import at_major_revision
from tests.support.util import cli


def at_revision(sd: api.StateDir) -> None:
    """Run p at stage 4 (revision) in progress: 2.5 passed, 3 decided major_revision."""
    at_major_revision(sd, "p")
    sd.confirm("p", response="continue")


def test_next_names_the_optional_arguments_and_a_round_without_items_addressed_is_warned(
        sd: api.StateDir, repo: Path) -> None:
    at_revision(sd)

    async def main() -> None:
        async with agent(repo / "state") as a:
            moves = (await a("next", run_id="p"))["moves"]
            revision = next(m for m in moves if m["command"] == "revision")
            assert revision["args"] == ["items_total"]
            assert revision["optional"] == ["items_addressed", "pending"]
            material = next(m for m in moves if m["command"] == "material")
            assert "file" in material["optional"]
            # the move followed literally: the round is recorded, and the warning says what it lacks
            literal = await a("revision", run_id="p", items_total=2)
            assert literal["summary"].endswith("0/2 items")
            assert "items_addressed left out" in literal["warning"], literal
            assert "--" not in literal["warning"]  # in the tool's words: no flag the agent cannot pass
            text = (await a.raw("revision", run_id="p", items_total=2)).content[0].text
            assert "\n" not in text and "warning: items_addressed left out" in text  # a client showing text alone
            corrected = await a("revision", run_id="p", items_total=2, items_addressed=2)
            assert "warning" not in corrected and corrected["summary"].endswith("2/2 items")
            assert corrected["round"] == literal["round"]  # the same round, corrected
    anyio.run(main)


def test_a_material_file_git_does_not_track_is_warned_of(sd: api.StateDir, repo: Path) -> None:
    """A passport promises a file every clone holds: one git does not track is registered with a
    warning saying so (in the tool's words), none where it is tracked or allow_untracked says it is meant."""
    sd.new("p", topic="T")
    (repo / "draft.md").write_text("## Abstract\n## References\n")  # the fields the schema check asks of a draft
    (repo / "notes.md").write_text("## Abstract\n## References\n")

    async def main() -> None:
        async with agent(repo / "state") as a:
            untracked = await a.raw("material", run_id="p", names=["paper_draft"], file=["draft.md"])
            warnings = untracked.structured_content["warnings"]
            assert not untracked.is_error and len(warnings) == 1, warnings
            assert "draft.md is not tracked by git: a clone will not hold it" in warnings[0]
            assert "allow_untracked" in warnings[0] and "--" not in warnings[0]  # the argument, not the flag
            assert "not tracked by git" in untracked.content[0].text  # a client showing the text alone sees it
            meant = await a("material", run_id="p", names=["paper_draft"], file=["notes.md"], allow_untracked=True)
            assert "warnings" not in meant
            subprocess.run(["git", "add", "draft.md"], cwd=repo, check=True)
            tracked = await a("material", run_id="p", names=["paper_draft"], file=["draft.md"])
            assert "warnings" not in tracked and tracked["version_label"] == "paper_draft_v3"
    anyio.run(main)


def test_the_cli_warns_of_an_untracked_material_file_too(sd: api.StateDir, repo: Path) -> None:
    sd.new("p", topic="T")
    (repo / "draft.md").write_text("a draft\n")
    told = cli("material", "p", "paper_draft", "--file", "draft.md", cwd=repo)
    assert told.returncode == 0 and "draft.md is not tracked by git" in told.stderr, told.stderr
    assert "--allow-untracked" in told.stderr
    quiet = cli("material", "p", "paper_draft", "--file", "draft.md", "--allow-untracked", cwd=repo)
    assert quiet.returncode == 0 and "not tracked" not in quiet.stderr


def test_a_required_argument_left_out_names_its_values(sd: api.StateDir, repo: Path) -> None:
    sd.new("p", topic="T")

    async def main() -> None:
        async with agent(repo / "state") as a:
            with pytest.raises(ToolError) as caught:
                await a("stage", run_id="p", stage="1")
            error = caught.value.doc["error"]
            assert caught.value.code == "INVALID_VALUE" and "status is required (one of" in error["message"]
            assert {"in_progress", "completed"} <= set(error["details"]["allowed"])
    anyio.run(main)


def test_a_review_checkpoint_shows_the_user_the_decision_they_approve(sd: api.StateDir, repo: Path) -> None:
    at_major_revision(sd, "p")  # stage 3's MANDATORY checkpoint open
    user = User()

    async def main() -> None:
        async with agent(repo / "state", "legacy", user) as a:
            await a("confirm", run_id="p")
    anyio.run(main)
    assert "The decision you approve: major_revision (the pipeline goes on to 4 REVISE)." in user.asked[0].message


def test_a_tool_another_agent_takes_says_whose_server_takes_it(sd: api.StateDir, repo: Path) -> None:
    async def main() -> None:
        async with agent(repo / "state") as a:  # the orchestrator's server
            tools = {t.name: t for t in (await a.client.list_tools()).tools}
            said = tools["integrity"].description
            assert "(integrity_verification's: its own MCP server, started in that role)" in said, said
            assert tools["integrity"].input_schema["properties"]["actor"]["enum"] == ["pipeline_orchestrator"]
            assert "collaboration_depth_agent's: its own MCP server" in tools["observe"].description
    anyio.run(main)


def test_a_move_whose_tool_is_not_served_says_which_group_serves_it(sd: api.StateDir, repo: Path) -> None:
    """The default server serves the pipeline group: `next`'s moves of other groups' tools (the
    re-review contract, `set`, `redo`) name that group, the pipeline's own name none."""
    sd.new("p", topic="T")

    async def main() -> None:
        host = mcp_host(command_table())
        async with Client(build(repo / "state", host, catalog.DEFAULT)) as client:  # type: ignore[arg-type]
            moves = (await client.call_tool("next", {"run_id": "p"})).structured_content["moves"]
            by_command = {m["command"]: m for m in moves}
            assert by_command["set"]["unserved"] == "control" and by_command["pipeline"]["unserved"] == "control"
            assert "unserved" not in by_command["stage"] and "unserved" not in by_command["material"]
        host = mcp_host(command_table())
        async with Client(build(repo / "state", host, catalog.GROUPS)) as client:  # type: ignore[arg-type]
            moves = (await client.call_tool("next", {"run_id": "p"})).structured_content["moves"]
            assert not [m for m in moves if "unserved" in m]
    anyio.run(main)

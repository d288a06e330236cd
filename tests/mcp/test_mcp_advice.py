"""Advice an agent follows literally leads the right way: `next` names the optional arguments that
change what a move records, and a revision round recorded without `items_addressed` says so."""
from __future__ import annotations

from pathlib import Path

import anyio
from conftest import clear_checklist, to_integrity
from mcp_session import agent

from statedir import api


def at_revision(sd: api.StateDir) -> None:
    """Run p at stage 4 (revision) in progress: 2.5 passed, 3 decided major_revision."""
    to_integrity(sd, "p")
    sd.integrity("p", "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    clear_checklist(sd, "p")
    sd.stage("p", "2.5", "completed")
    sd.confirm("p", response="continue")
    sd.material("p", ["review_reports"])
    sd.material("p", ["revision_roadmap"])
    sd.stage("p", "3", "completed", decision="major_revision")
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

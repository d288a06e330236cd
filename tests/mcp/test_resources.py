"""What an agent reads before it acts, over MCP: the agents guide and each template's rules as
resources, prompts that set it to drive a run by `next` alone, server instructions carrying the
checkpoint rule; and a run driven through the tools taking only the moves `next` lists, to completed. A
run's stages name the fields each material's file must hold (a file short of them is told at once), and
a Material Passport's shape is a resource too."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from statedir import agents, api
from statedir.engine import template
from statedir.engine.template import catalog as template_catalog
from tests.support.mcp_session import AGENT_ROLES, User, agent
from tests.support.next_driver import choose, pick
from tests.support.util import tracked


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one, not made by init again)."""
    return repo / "state"


def test_the_guide_and_each_templates_rules_are_resources(store: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            listed = {str(r.uri): r for r in (await a.client.list_resources()).resources}
            assert set(listed) >= {"statedir://guide", "statedir://templates/academic-pipeline",
                                   "statedir://templates/linear"}
            guide = (await a.client.read_resource("statedir://guide")).contents[0]
            assert guide.text == agents.guide() and guide.mime_type == "text/markdown"
            rules = (await a.client.read_resource("statedir://templates/academic-pipeline")).contents[0].text
            expected = template_catalog.render(template_catalog.describe(template.load("academic-pipeline")))
            assert rules == expected and "MANDATORY" in rules
            kinds = (await a.client.list_resource_templates()).resource_templates
            assert [k.uri_template for k in kinds] == ["statedir://templates/{name}", "statedir://runs/{run_id}/stages"]
            for uri in ("statedir://templates/nowhere", "statedir://templates/../../etc/passwd", "statedir://x"):
                with pytest.raises(MCPError) as refused:
                    await a.client.read_resource(uri)
                assert refused.value.data["code"] == "INVALID_VALUE", uri
    anyio.run(main)


def test_a_template_the_store_holds_is_a_resource_too(store: Path) -> None:
    shipped = template.shipped()["linear"].read_text().replace("name: linear", "name: house")
    (store / "templates").mkdir(exist_ok=True)
    (store / "templates" / "house.yaml").write_text(shipped)

    async def main() -> None:
        async with agent(store) as a:
            uris = {str(r.uri) for r in (await a.client.list_resources()).resources}
            assert "statedir://templates/house" in uris
            assert (await a.client.read_resource("statedir://templates/house")).contents[0].text.startswith("house")
    anyio.run(main)


def test_prompts_set_an_agent_to_drive_a_run_by_next_alone(store: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            prompts = {p.name: p for p in (await a.client.list_prompts()).prompts}
            assert set(prompts) == {"drive_run", "start_run"}
            assert [(x.name, x.required) for x in prompts["drive_run"].arguments] == [("run_id", True)]
            text = (await a.client.get_prompt("drive_run", {"run_id": "r9"})).messages[0].content.text
            assert "run_id r9" in text and "`next`" in text and "Never answer it for them" in text
            assert "{" not in text.replace("{error: {code, message, details}}", "")
            with pytest.raises(MCPError):
                await a.client.get_prompt("drive_run", {})
            with pytest.raises(MCPError):
                await a.client.get_prompt("nowhere", {})
    anyio.run(main)


@pytest.mark.slow  # a server process over stdio
def test_over_stdio_the_instructions_carry_the_checkpoint_rule_and_the_guide_is_read(store: Path) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "statedir", "mcp", "--store", str(store)],
                                   env=dict(os.environ))

    async def main() -> None:
        async with Client(server) as client:
            instructions = client.instructions or ""
            assert "Never answer a MANDATORY checkpoint for the user" in instructions
            assert "statedir://guide" in instructions and "`next`" in instructions
            assert (await client.read_resource("statedir://guide")).contents[0].text == agents.guide()
            assert "drive_run" in {p.name for p in (await client.list_prompts()).prompts}
    anyio.run(main)


TASTE = {"decision": ["accept"], "verdict": ["PASS"], "response": ["continue"]}


@pytest.mark.slow  # a whole run through MCP
def test_a_run_driven_through_mcp_from_next_alone_reaches_completed(store: Path, repo: Path) -> None:
    """The agent knows nothing but what `next` says: each step it takes a listed move, by the
    actor listed, with the listed values, guarded by expect_head; where nothing it prefers is
    listed, it registers the materials a blocked move names. MANDATORY checkpoints go to the user."""
    user = User()

    async def main() -> list[tuple[str, Any]]:
        taken: list[tuple[str, Any]] = []
        async with agent(store, user=user, roles=AGENT_ROLES) as a:  # one client, as each role `next` names
            await a("new", run_id="r", topic="T")
            for _ in range(120):
                out = await a("next", run_id="r")
                if out["pipeline_state"] == "completed":
                    return taken
                head = a.head
                move = pick(out["moves"], TASTE)
                if move is None:
                    wanted = [e for e in out["blocked"] if e.get("materials")]
                    assert wanted, out
                    material = next(m for m in out["moves"] if m["command"] == "material")
                    for names in wanted[0]["materials"]:
                        assert names[0] in material["allowed"]["names"]
                        await a("material", run_id="r", names=[names[0]], actor=material["actor"], expect_head=head)
                        head = a.head
                        taken.append(("material", names[0]))
                    continue
                values = choose(move, TASTE)
                await a(move["command"], run_id="r", actor=move["actor"], expect_head=head, **values)
                taken.append((move["command"], values.get("stage") or values.get("next")))
        raise AssertionError(f"the run did not end: {taken}")
    taken = anyio.run(main)
    sd = api.StateDir(store)
    assert sd.get("r", "pipeline_state") == "completed"
    assert user.asked, "MANDATORY checkpoints were the user's"
    answered = [e for e in sd.show("r")["history"].get("checkpoints", []) if e.get("answered_by") == "user"]
    assert len(answered) == len(user.asked)
    assert sum(command == "confirm" for command, _ in taken) >= 6 and ("integrity", "4.5") in taken, taken


def test_a_broken_template_of_the_stores_is_listed_and_reading_it_names_the_problem(store: Path) -> None:
    (store / "templates").mkdir(exist_ok=True)
    (store / "templates" / "broken.yaml").write_text("name: broken\nstages: [\n")

    async def main() -> None:
        async with agent(store) as a:
            uris = {str(r.uri) for r in (await a.client.list_resources()).resources}
            assert {"statedir://guide", "statedir://templates/academic-pipeline", "statedir://templates/broken"} <= uris
            with pytest.raises(MCPError) as refused:
                await a.client.read_resource("statedir://templates/broken")
            assert refused.value.data["code"] == "BAD_FILE" and refused.value.data["details"]["line"] == 3
    anyio.run(main)


def test_start_run_names_the_template_only_where_one_is_given(store: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            bare = (await a.client.get_prompt("start_run", {"run_id": "r9", "topic": "T"})).messages[0].content.text
            assert "no template (the store's default)" in bare and "template ;" not in bare and "(template" not in bare
            named = await a.client.get_prompt("start_run", {"run_id": "r9", "topic": "T", "template": "house"})
            assert "template house," in named.messages[0].content.text
    anyio.run(main)


def test_a_material_s_file_is_told_the_fields_it_lacks_and_a_run_s_stages_name_them(sd: api.StateDir,
                                                                                    repo: Path) -> None:
    sd.new("p", topic="T")
    bare = tracked(repo, "bare.md", "a draft\n")
    whole = tracked(repo, "whole.md", "# Draft\n## Abstract\ntext\n## References\n- one\n")

    async def main() -> None:
        async with agent(repo / "state") as a:
            told = await a("material", run_id="p", names=["paper_draft"], file=[bare])
            assert "paper_draft.abstract, paper_draft.references" in told["warnings"][0], told
            assert "when the stage is left" in told["warnings"][0]
            assert "warnings" not in await a("material", run_id="p", names=["paper_draft"], file=[whole])
            assert "warnings" not in await a("material", run_id="p", names=["paper_draft"])  # no file: nothing read
            stages = json.loads((await a.client.read_resource("statedir://runs/p/stages")).contents[0].text)
            assert stages["material_fields"]["rq_brief"] == ["research_question"]
            assert stages["material_fields"]["paper_draft"] == ["abstract", "references"]
            assert "integrity_report_pre" not in stages["material_fields"]  # its fields are the stage's record
            assert "Markdown heading" in stages["material_fields_held"]
    anyio.run(main)


def test_a_material_passport_s_shape_is_a_resource(repo: Path, sd: api.StateDir) -> None:
    """What `new`'s passport must hold for mid-entry can be read before the agent writes one."""
    async def main() -> None:
        async with agent(repo / "state") as a:
            listed = {str(r.uri): r for r in (await a.client.list_resources()).resources}
            assert "mid-entry" in listed["statedir://passport/schema"].description
            shape = json.loads((await a.client.read_resource("statedir://passport/schema")).contents[0].text)
            assert {"verification_status", "integrity_pass_date", "content_hash"} <= set(shape["properties"])
    anyio.run(main)

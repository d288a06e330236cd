"""What an agent reads is lean: `statedir mcp` serves the everyday group unless told otherwise,
its tool list under 20 kB; a result's document is sent once (the text a one-line summary); a
refusal carries the moves that fix it; the groups and a run's stages are resources."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from statedir import api
from statedir.cli.registry import command_table
from statedir.commands import table
from statedir.files import yaml
from statedir.mcp import catalog
from statedir.mcp.host import mcp_host
from statedir.mcp.server import build, wire_bytes
from statedir.research import evidence
from tests.support.mcp_session import ToolError, agent
from tests.support.util import snapshot


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    return repo / "state"


@pytest.mark.slow  # a server process over stdio, twice
def test_statedir_mcp_serves_the_everyday_group_in_under_20_kb_the_rest_on_request(store: Path) -> None:
    def server(*more: str) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, args=["-m", "statedir", "mcp", "--store", str(store),
                                                                   *more], env=dict(os.environ))

    async def main() -> None:
        async with Client(server()) as client:
            listed = await client.list_tools()
            names = {t.name for t in listed.tools}
            assert {"next", "new", "stage", "confirm", "material", "integrity", "show", "status"} <= names
            assert not names & {"bus_set", "research_start_run", "signers_add", "sync", "log", "set"}
            # as the benches count it (bench/mcp.py, bench/mcp_run.py): the result as it came over the wire
            assert wire_bytes(listed) < 20_000
        async with Client(server("--tools", "all")) as client:
            assert len((await client.list_tools()).tools) >= 55
    anyio.run(main)


def test_a_command_s_group_is_declared_else_found() -> None:
    def command(name: str, group: str | None = None, actor: bool = False) -> table.Command:
        def transition(run_id: str, actor: str = "x") -> None:
            """A transition."""

        def read(run_id: str) -> None:
            """A read."""
        return table.Command((name,), transition if actor else read, group=group)

    from statedir.mcp.tools import tool_of
    assert tool_of("resolve", ("resolve",), command("resolve", actor=True)).kind.group == "pipeline"
    assert tool_of("checklist", ("checklist",), command("checklist")).kind.group == "control"
    assert tool_of("checklist", ("checklist",), command("checklist", group="history")).kind.group == "history"
    assert tool_of("stage", ("stage",), command("stage", group="nonsense")).kind.group == "pipeline"
    assert catalog.chosen_groups("all") == catalog.GROUPS


def test_a_result_is_sent_once_its_text_one_line(store: Path) -> None:
    async def main() -> None:
        async with Client(build(store, mcp_host(command_table()))) as client:  # type: ignore[arg-type]
            made = await client.call_tool("new", {"run_id": "r1", "topic": "T"})
            assert made.structured_content["run_id"] == "r1"
            text = made.content[0].text
            assert "\n" not in text and made.structured_content["summary"] in text
            assert made.structured_content["commit"][:12] in text
            moves = await client.call_tool("next", {"run_id": "r1"})
            assert moves.content[0].text.endswith("blocked") and "\n" not in moves.content[0].text
            assert len(moves.content[0].text) < 100 and moves.structured_content["moves"]
            refused = await client.call_tool("stage", {"run_id": "r1", "stage": "9", "status": "completed"})
            assert refused.is_error and json.loads(refused.content[0].text) == refused.structured_content
    anyio.run(main)


def test_a_refusal_carries_the_moves_that_fix_it_not_every_move(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            await a("new", run_id="r1", topic="T")
            every = (await a("next", run_id="r1"))["moves"]
            saved = snapshot(repo)
            with pytest.raises(ToolError) as caught:  # no checkpoint open: what opens one is a stage move
                await a("confirm", run_id="r1", response="continue")
            details = caught.value.doc["error"]["details"]
            assert details["moves"] and all(m["command"] == "stage" and m.get("leads_to") for m in details["moves"])
            assert details["more_moves"] == len(every) - len(details["moves"]) > 0
            assert details["all_moves"] == "next {run_id: r1}"
            with pytest.raises(ToolError) as caught:  # a stage move refused: that stage's moves
                await a("stage", run_id="r1", stage="1", status="completed")
            details = caught.value.doc["error"]["details"]
            assert details["moves"] and all(m["command"] == "stage" and "1" in m["allowed"]["stage"]
                                            for m in details["moves"])
            assert len(json.dumps(details["moves"])) < len(json.dumps(every))
            assert snapshot(repo) == saved
    anyio.run(main)


def test_a_stage_move_refused_while_a_checkpoint_is_open_carries_its_answer_not_other_stages_moves(
        store: Path, repo: Path, sd: api.StateDir) -> None:
    """At stage 1's checkpoint, `stage 2 in_progress` is fixed by `confirm` and new outputs on the closed
    stage 1 by `confirm` or `redo` of stage 1, never by the `blocked` moves of stages 2..6 the same
    command also has; past the checkpoint, a `confirm` is fixed by no `redo` of the stages behind."""
    sd.new("r1", topic="T")
    sd.stage("r1", "1", "in_progress")
    sd.stage("r1", "1", "completed")

    async def main() -> None:
        async with agent(store) as a:
            saved = snapshot(repo)
            for call, fixes in (({"stage": "2", "status": "in_progress"}, ["confirm"]),
                                ({"stage": "1", "status": "completed", "output": ["rq_brief"]}, ["confirm", "redo"])):
                with pytest.raises(ToolError) as caught:
                    await a("stage", run_id="r1", **call)
                moves = caught.value.doc["error"]["details"]["moves"]
                assert [m["command"] for m in moves] == fixes, (call, moves)
            assert snapshot(repo) == saved
            await a("confirm", run_id="r1", response="continue")
            with pytest.raises(ToolError) as caught:  # answered already: stage 2's moves, never a redo of 1
                await a("confirm", run_id="r1", response="continue")
            details = caught.value.doc["error"]["details"]
            assert "redo" not in [m["command"] for m in details["moves"]], details["moves"]
            assert details["all_moves"] == "next {run_id: r1}"
    anyio.run(main)


def test_the_groups_and_a_run_s_stages_are_resources(store: Path) -> None:
    async def main() -> None:
        async with Client(build(store, mcp_host(command_table()), catalog.DEFAULT)) as client:  # type: ignore[arg-type]
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            assert "statedir://tools" in listed
            groups = json.loads((await client.read_resource("statedir://tools")).contents[0].text)["groups"]
            by_name = {g["name"]: g for g in groups}
            assert list(by_name) == list(catalog.GROUPS)
            assert by_name["pipeline"]["served"] and not by_name["bus"]["served"]
            assert "bus_set" in by_name["bus"]["tools"] and "stage" in by_name["pipeline"]["tools"]
            await client.call_tool("new", {"run_id": "r1", "topic": "T"})
            stages = json.loads((await client.read_resource("statedir://runs/r1/stages")).contents[0].text)
            assert stages["template"] == "academic-pipeline"
            ids = [s["id"] for s in stages["stages"]]
            assert "3p" in ids and "3'" not in ids and "plan" not in ids  # its own template's, one spelling each
            assert {"id": "3p", "aliases": ["3'"]}.items() <= next(s for s in stages["stages"] if s["id"] == "3p").items()
            with pytest.raises(MCPError) as refused:
                await client.read_resource("statedir://runs/nope/stages")
            assert refused.value.data["code"] == "UNKNOWN_RUN"
    anyio.run(main)


def test_the_research_tools_have_real_output_schemas_their_results_keep_to(store: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            tools = {t.name: t for t in (await a.client.list_tools()).tools if t.name.startswith("research_")}
            assert len(tools) == 20
            for name, tool in tools.items():
                assert tool.output_schema and tool.output_schema.get("properties"), name
            run = await a("research_start_run", skill="s", question="Does it hold?")  # checked against its schema
            assert set(tools["research_start_run"].output_schema["required"]) <= set(run)
            await a("research_record_result", run_id=run["id"], summary="it holds")
            role = tools["research_record_result"].input_schema["properties"]["artifact_role"]
            assert "enum" not in role and all(r in role["description"] for r in evidence.ARTIFACT_ROLES)
            kept = await a("research_record_result", run_id=run["id"], summary="notes", artifact_role="lab_notes",
                           artifact_path="n.md")  # resource-resolver owns the list: another role is kept
            assert kept["artifact_ref"] == {"role": "lab_notes", "path": "n.md"}
            found = await a("research_query", run_id=run["id"])
            assert found["runs"][0]["id"] == run["id"]
            assert (await a("research_validate"))["clean"] is True
    anyio.run(main)


def test_a_stage_records_only_outputs_its_template_declares_and_no_list_grows_without_bound(store: Path,
                                                                                             repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            await a("new", run_id="r1", topic="T")
            await a("stage", run_id="r1", stage="1", status="in_progress", output=["RQ Brief"])
            saved = snapshot(repo)
            with pytest.raises(ToolError) as caught:  # the filed case: 2,000 strings of 200 characters
                await a("stage", run_id="r1", stage="1", status="completed", output=["y" * 200] * 2000)
            assert caught.value.code == "INVALID_VALUE" and caught.value.doc["error"]["details"]["argument"] == "output"
            with pytest.raises(ToolError) as caught:  # an output nobody declared
                await a("stage", run_id="r1", stage="1", status="completed", output=["whatever I like"])
            error = caught.value.doc["error"]
            assert error["code"] == "INVALID_VALUE" and "has no output 'whatever I like'" in error["message"]
            assert {"research", "rq_brief", "bibliography"} <= set(error["details"]["expected"])
            with pytest.raises(ToolError):
                await a("output", run_id="r1", stage="1", output=["junk"], actor="deep-research")
            assert snapshot(repo) == saved
            done = await a("stage", run_id="r1", stage="1", status="completed",
                           output=["Bibliography (22 sources)", "research_v1"])
            assert done["commit"]
    anyio.run(main)


def test_a_repeated_output_call_over_mcp_records_each_name_once_and_commits_nothing(store: Path,
                                                                                      repo: Path) -> None:
    async def main() -> None:
        async with agent(store, roles=("pipeline_orchestrator", "deep-research")) as a:
            await a("new", run_id="r1", topic="T")
            await a("stage", run_id="r1", stage="1", status="in_progress", output=["RQ Brief"])
            saved = snapshot(repo)
            for _ in range(3):
                again = await a("output", run_id="r1", stage="1", output=["RQ Brief"], actor="deep-research")
                assert (again["changed"], again["commit"]) == (False, None) and "already records" in again["summary"]
            assert snapshot(repo) == saved
            mixed = await a("output", run_id="r1", stage="1", output=["RQ Brief", "bibliography"],
                            actor="deep-research")
            assert mixed["commit"] and mixed["summary"] == "stage 1 output: bibliography"
            assert yaml.load((store / "runs" / "r1" / "stages" / "1.yaml").read_bytes())["outputs"] == [
                "RQ Brief", "bibliography"]
    anyio.run(main)


def test_the_cli_bounds_a_list_argument_too(store: Path, repo: Path) -> None:
    from tests.support.util import cli
    assert cli("new", "r1", "--topic", "T", "--store", str(store)).returncode == 0
    saved = snapshot(repo)
    many = [arg for _ in range(300) for arg in ("--output", "rq_brief")]
    proc = cli("stage", "r1", "1", "in_progress", *many, "--json", "--store", str(store))
    assert proc.returncode == 2 and "more than 256 items" in proc.stdout and "Traceback" not in proc.stderr
    assert snapshot(repo) == saved


def test_a_completed_research_run_takes_no_result_and_a_known_doi_says_it_was_deduplicated(store: Path,
                                                                                            repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            first = await a("research_create_source", title="A study", doi="10.1/x")
            again = await a("research_create_source", title="Another title", doi="10.1/x", venue="V")
            assert (again["id"], again["deduplicated"], again["ignored"], again["commit"]) == (
                first["id"], True, ["title", "venue"], None)
            # a client showing the model only the text sees it too, and what research_start_run made
            text = (await a.raw("research_create_source", title="Third", doi="10.1/x")).content[0].text
            assert text == (f"research_create_source: {first['id']}; deduplicated: the existing record of this DOI, "
                            "nothing written (fields ignored: title)"), text
            started = await a.raw("research_start_run", skill="s", question="Q0?")
            made = started.structured_content
            assert started.content[0].text.startswith(
                f"research_start_run: {made['id']} (running), made with it: {', '.join(made['created'])} (commit ")
            run = await a("research_start_run", skill="s", question="Q?")
            await a("research_complete_run", run_id=run["id"], status="completed")
            saved = snapshot(repo)
            with pytest.raises(ToolError) as caught:
                await a("research_record_result", run_id=run["id"], summary="late")
            assert caught.value.code == "ILLEGAL_TRANSITION" and "is completed" in caught.value.doc["error"]["message"]
            for name, more in (("research_record_claim", {"statement": "late"}),
                               ("research_complete_run", {"status": "failed"}),
                               ("research_complete_run", {"status": "completed"})):
                with pytest.raises(ToolError) as caught:
                    await a(name, run_id=run["id"], **more)
                message = caught.value.doc["error"]["message"]
                assert caught.value.code == "ILLEGAL_TRANSITION" and "is completed" in message, name
                assert "research_start_run" in message, name
            assert snapshot(repo) == saved
    anyio.run(main)


def test_the_bus_tools_speak_of_nothing_an_mcp_agent_has_not_got(store: Path) -> None:
    async def main() -> None:
        async with Client(build(store, mcp_host(command_table()), ("bus",))) as client:  # type: ignore[arg-type]
            tools = (await client.list_tools()).tools
            assert len(tools) == 5
            for tool in tools:
                words = json.dumps([tool.description, tool.input_schema])
                assert "pipeline-state.sh" not in words and "state_file" not in words, tool.name
                assert "template's roles" not in words, tool.name
                actor = tool.input_schema["properties"].get("actor")
                # the server's own roles are the only ones a bus call may name (statedir mcp --role)
                assert actor is None or (actor["enum"] == ["pipeline_orchestrator"] and "template" not in
                                         json.dumps(actor)), tool.name
    anyio.run(main)


def test_the_tools_words_name_a_stage_as_its_enum_does_and_leave_out_what_says_nothing(store: Path) -> None:
    """Every agent reads the default list each session: an argument is described only where its name
    and enum leave something to say, and a stage is named as the stage enums spell it (`3p`)."""
    async def main() -> None:
        async with Client(build(store, mcp_host(command_table()), groups=catalog.DEFAULT)) as client:  # type: ignore[arg-type]
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        offered = set(listed["stage"].input_schema["properties"]["stage"]["enum"])
        assert "3p" in offered and "3'" not in offered
        for name, tool in listed.items():
            props = tool.input_schema["properties"].values()
            texts = [tool.description or "", *(p.get("description", "") for p in props)]
            assert not [text for text in texts if "3'" in text or "4'" in text], name
        said = {(name, argument) for name, tool in listed.items()
                for argument, prop in tool.input_schema["properties"].items() if "description" in prop}
        assert not said & {("integrity", "refs_total"), ("integrity", "issues_found"), ("material", "origin_skill"),
                           ("revision", "items_addressed"), ("stage", "mode"), ("status", "line")}
        assert "user_review_required" in listed["confirm"].input_schema["properties"]["decision"]["description"]
    anyio.run(main)

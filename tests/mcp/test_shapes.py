"""Shapes an agent writes can be read before it writes, and nothing it passes grows the store without
bound: a file argument's content is held to the bound of an argument, a material's file is told at once
which fields the schema check will ask of it, a template may take free outputs (warned), and a size
refusal's advice fits the argument."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

import statedir
from statedir import api
from statedir.cli.registry import command_table
from statedir.mcp.host import mcp_host
from statedir.mcp.server import build
from tests.support.mcp_session import AGENT_ROLES, ToolError, agent
from tests.support.util import cli, snapshot

OBSERVER = "collaboration_depth_agent"


def tracked(repo: Path, name: str, text: str) -> str:
    (repo / name).write_text(text)
    subprocess.run(["git", "add", name], cwd=repo, check=True)
    return name


def test_a_file_argument_s_content_is_bounded_as_an_argument_is(sd: api.StateDir, repo: Path) -> None:
    """The filed case's twin: an observer report of 5,000 scores (or one 600 kB string) was copied
    whole into the run's log; now it is INVALID_VALUE naming the argument, the file and the limit."""
    sd.new("p", topic="T")
    sd.stage("p", "1", "in_progress")
    many = tracked(repo, "many.json", json.dumps({"zone": "Zone 2", "advisory_only": True,
                                                  "scores": {f"k{i}": 4 for i in range(5000)}}))
    long = tracked(repo, "long.json", json.dumps({"zone": "Z" * 600_000, "advisory_only": True}))
    passport = tracked(repo, "passport.yaml", "".join(f"k{i}: v\n" for i in range(300)))
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(repo / "state", roles=AGENT_ROLES) as a:
            for report, said in ((many, "more than 256 items"), (long, "more than 262144 bytes of text")):
                with pytest.raises(ToolError) as caught:
                    await a("observe", run_id="p", stage="1", checkpoint="FULL", report=report, actor=OBSERVER)
                error = caught.value.doc["error"]
                assert error["code"] == "INVALID_VALUE" and said in error["message"], error
                assert error["details"]["argument"] == "report" and error["details"]["file"].endswith(report)
            with pytest.raises(ToolError) as caught:
                await a("new", run_id="q", topic="T", passport=passport)
            assert caught.value.doc["error"]["details"]["argument"] == "passport"
    anyio.run(main)
    assert snapshot(repo) == saved
    proc = cli("observe", "p", "--stage", "1", "--checkpoint", "FULL", "--report", many, "--actor", OBSERVER, cwd=repo)
    assert proc.returncode == 2 and "more than 256 items" in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(repo) == saved


def test_a_size_refusal_s_advice_fits_the_argument(sd: api.StateDir) -> None:
    sd.new("p", topic="T")
    with pytest.raises(statedir.InvalidValue) as free_text:
        sd.stage("p", "1", "in_progress", reason="x" * 70_000)
    assert "long content belongs in a file" in free_text.value.message
    with pytest.raises(statedir.InvalidValue) as name:  # a field path: no file to move it to
        sd.get("p", "a." * 40_000)
    assert "long content belongs in a file" not in name.value.message
    assert "no such name or path is that long" in name.value.message


def test_a_size_refusal_names_the_tool_and_its_own_argument(sd: api.StateDir, repo: Path) -> None:
    """Over MCP a size refusal names the argument as the tool's schema spells it (`output`, not the
    API's `outputs`) and the tool, never a Python function (`stage(): outputs`, `record_result():`)."""
    sd.new("p", topic="T")
    sd.stage("p", "1", "in_progress")
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(repo / "state", roles=AGENT_ROLES) as a:
            for tool, arguments, argument in [
                    ("stage", {"stage": "1", "status": "in_progress", "output": ["o"] * 300}, "output"),
                    ("material", {"names": ["rq_brief"], "file": ["y" * 70_000]}, "file"),
                    ("checklist", {"stage": "2.5", "item": ["1=CLEAR"] * 300}, "item"),
                    ("integrity", {"stage": "2.5", "verdict": "PASS", "refs_total": 1, "refs_verified": 1,
                                   "issue": ["MAJOR:X:y"] * 300, "actor": "integrity_verification"}, "issue"),
                    ("show", {"run_id": "x" * 70_000}, "run_id")]:
                with pytest.raises(ToolError) as caught:
                    await a(tool, **{"run_id": "p", **arguments})
                error = caught.value.doc["error"]
                assert error["details"]["argument"] == argument, (tool, error)
                assert error["message"].startswith(f"{tool}: {argument} "), (tool, error)
    anyio.run(main)
    assert snapshot(repo) == saved


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


def test_a_template_declaring_free_outputs_records_an_unknown_one_with_a_warning(sd: api.StateDir,
                                                                                  repo: Path) -> None:
    text = (Path(api.__file__).parents[2] / "templates" / "linear.yaml").read_text()
    (repo / "state" / "templates").mkdir(exist_ok=True)
    (repo / "state" / "templates" / "loose.yaml").write_text(
        text.replace("name: linear", "name: loose") + "free_outputs: true\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "a template taking free outputs"], cwd=repo, check=True)
    sd.new("free", template="loose")
    sd.new("strict", template="linear")
    done = sd.stage("free", "plan", "in_progress", outputs=["a sketch", "plan"])
    assert done["commit"] and done["warnings"] == [
        "stage plan recorded 'a sketch', which template loose does not declare (it takes free outputs); the "
        "declared ones: plan, output, report, deliverable"]
    assert sd.get("free", "stages.plan.outputs") == ["a sketch", "plan"]
    with pytest.raises(statedir.InvalidValue) as caught:
        sd.stage("strict", "plan", "in_progress", outputs=["a sketch"])
    assert caught.value.details["expected"] == ["plan", "output", "report", "deliverable"]

    async def main() -> None:
        async with agent(repo / "state") as a:
            stages = json.loads((await a.client.read_resource("statedir://runs/free/stages")).contents[0].text)
            assert "takes free outputs too" in stages["outputs"]
            strict = json.loads((await a.client.read_resource("statedir://runs/strict/stages")).contents[0].text)
            assert "any other is refused" in strict["outputs"]
    anyio.run(main)


def test_research_query_s_records_are_described_by_kind(repo: Path, sd: api.StateDir) -> None:
    async def main() -> None:
        host = mcp_host(command_table())
        async with Client(build(repo / "state", host, ("research",))) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in (await client.list_tools()).tools}
            runs = tools["research_query"].output_schema["properties"]["runs"]["items"]
            assert {"id", "skill", "status", "started_at"} <= set(runs["properties"])
            assert runs["properties"]["status"]["enum"] == ["running", "completed", "failed"]
            source = await client.call_tool("research_create_source", {"title": "A", "doi": "10.1/x"})
            found = await client.call_tool("research_query", {"source_id": source.structured_content["id"]})
            assert not found.is_error and found.structured_content["sources"][0]["doi"] == "10.1/x"
    anyio.run(main)


def test_the_status_line_names_an_open_checkpoint_s_stage_by_its_id_too(sd: api.StateDir) -> None:
    """Short names may read alike (3.22's RE-REV and RE-REV' for 3' and 4'): the checkpoint's stage is named by both."""
    sd.new("p", topic="T")
    sd.stage("p", "1", "in_progress")
    sd.stage("p", "1", "completed")
    assert sd.status("p")["line"].endswith("|  checkpoint open: FULL after RES (1)")


def test_a_material_passport_s_shape_is_a_resource(repo: Path, sd: api.StateDir) -> None:
    """What `new`'s passport must hold for mid-entry can be read before the agent writes one."""
    async def main() -> None:
        async with agent(repo / "state") as a:
            listed = {str(r.uri): r for r in (await a.client.list_resources()).resources}
            assert "mid-entry" in listed["statedir://passport/schema"].description
            shape = json.loads((await a.client.read_resource("statedir://passport/schema")).contents[0].text)
            assert {"verification_status", "integrity_pass_date", "content_hash"} <= set(shape["properties"])
    anyio.run(main)

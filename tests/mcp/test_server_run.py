"""A whole academic run, research to process summary, driven only through MCP tools (the stage
sequence of `statedir demo`), each write guarded by expect_head."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from statedir import api
from statedir.cli.registry import command_table
from statedir.gitops import git
from statedir.mcp import catalog
from statedir.mcp.host import mcp_host
from statedir.mcp.server import build
from tests.support.mcp_session import AGENT_ROLES, Agent, ToolError, User, agent
from tests.support.util import CLEAR_ITEMS, cli

INTEGRITY, OBSERVER = "integrity_verification", "collaboration_depth_agent"


class Guarded:
    """Every write passes the head of the agent's previous write: the run is never driven
    on a state this agent did not see."""

    def __init__(self, a: Agent) -> None:
        self.a = a
        self.head: str | None = None
        self.writes = 0
        self.tools: set[str] = set()

    async def __call__(self, name: str, **arguments: Any) -> Any:
        self.tools.add(name)
        if self.head is not None:
            arguments["expect_head"] = self.head
        out = await self.a(name, **arguments)
        self.head = out["commit"]
        self.writes += 1
        return out


@pytest.mark.slow  # a whole run through MCP
def test_a_whole_academic_run_through_mcp(repo: Path) -> None:
    api.init(repo / "state")
    store = repo / "state"
    files = repo / "artifacts"
    files.mkdir()

    def artifact(name: str, text: str) -> list[str]:
        (files / name).write_text(text)
        return [str(files / name)]

    (files / "observer.json").write_text(json.dumps({"zone": "Zone 2", "advisory_only": True,
                                                     "scores": {"delegation_intensity": 4}}))

    user = User()

    async def main() -> None:
        async with agent(store, user=user, roles=AGENT_ROLES) as a, agent(store, roles=AGENT_ROLES) as no_user:
            w = Guarded(a)
            await w("new", run_id="p", topic="AI and higher-education quality assurance")
            await w("stage", run_id="p", stage="1", status="in_progress", mode="socratic", turns="#3..#3")
            made = await w("material", run_id="p", names=["rq_brief", "methodology_blueprint", "bibliography",
                                                           "synthesis_report"], file=artifact("r.md", "RQ\n"))
            assert made["version_label"] == "research_v1"
            await w("stage", run_id="p", stage="1", status="completed", turns="#3..#15", output=["RQ Brief"])
            with pytest.raises(ToolError) as caught:  # the graph never lets RESEARCH jump to REVIEW
                await a("confirm", run_id="p", next="3", expect_head=w.head)
            assert caught.value.code == "ILLEGAL_TRANSITION"
            await w("observe", run_id="p", stage="1", checkpoint="FULL", report=str(files / "observer.json"),
                    actor=OBSERVER)
            await w("confirm", run_id="p", response="continue")
            await w("material", run_id="p", names=["paper_draft"], file=artifact("d.md", "v1\n"),
                    upstream=["research_v1"])
            await w("stage", run_id="p", stage="2", status="completed", mode="plan -> full")
            await w("confirm", run_id="p", response="continue")
            await w("integrity", run_id="p", stage="2.5", verdict="FAIL", refs_total=62, refs_verified=59,
                    issue=["SERIOUS:reference:Incorrect DOI"], actor=INTEGRITY)
            await w("integrity", run_id="p", stage="2.5", verdict="PASS", refs_total=62, refs_verified=62,
                    issues_found=1, issues_fixed=1, actor=INTEGRITY)
            await w("checklist", run_id="p", stage="2.5", item=CLEAR_ITEMS, actor=INTEGRITY)
            await w("stage", run_id="p", stage="2.5", status="completed")
            with pytest.raises(ToolError) as caught:  # MANDATORY: the user's, and this client cannot ask them
                await no_user("confirm", run_id="p", response="continue", expect_head=w.head)
            assert caught.value.code == "USER_ANSWER_REQUIRED" and not user.asked
            await w("confirm", run_id="p", response="continue")  # the user is asked, and answers
            await w("material", run_id="p", names=["review_reports"], file=artifact("rv.md", "reviews\n"))
            await w("material", run_id="p", names=["revision_roadmap"], file=artifact("rm.md", "5 items\n"))
            await w("stage", run_id="p", stage="3", status="completed", decision="major_revision")
            await w("confirm", run_id="p", response="review")
            await w("material", run_id="p", names=["revised_draft"], file=artifact("d.md", "v2\n"),
                    upstream=["review_v1", "roadmap_v1"])
            await w("revision", run_id="p", items_total=5, items_addressed=5)
            await w("stage", run_id="p", stage="4", status="completed")
            await w("confirm", run_id="p", response="continue")
            await w("material", run_id="p", names=["re_review_report"], file=artifact("rr.md", "accept\n"))
            for part in ("manifest", "criteria", "evidence", "claims"):  # the re-review contract, then its check
                await w("contract", run_id="p", stage="3'", part=part, file=artifact(f"{part}.md", f"{part}\n")[0])
            await w("contract", run_id="p", stage="3'", part="check", exit_code=0, file=artifact("check.json", "{}\n")[0])
            await w("stage", run_id="p", stage="3'", status="completed", decision="accept")
            await w("confirm", run_id="p", response="continue")
            await w("integrity", run_id="p", stage="4.5", verdict="PASS", refs_total=64, refs_verified=64,
                    issues_found=0, actor=INTEGRITY)
            await w("checklist", run_id="p", stage="4.5", item=CLEAR_ITEMS, actor=INTEGRITY)
            await w("stage", run_id="p", stage="4.5", status="completed")
            await w("confirm", run_id="p", response="continue")
            await w("material", run_id="p", names=["final_paper"], file=artifact("f.md", "final\n"))
            await w("stage", run_id="p", stage="5", status="completed", output=["final_paper.pdf"])
            await w("confirm", run_id="p", response="continue")
            await w("confirm", run_id="p", response="done")
            with pytest.raises(ToolError) as caught:
                await a("stage", run_id="p", stage="1", status="in_progress", expect_head=w.head)
            assert caught.value.code == "RUN_TERMINAL"

            assert await a("get", run_id="p", path="pipeline_state") == "completed"
            statuses = await a("get", run_id="p", path="stages")
            assert {k: v["status"] for k, v in statuses.items()} == {
                "1": "completed", "2": "completed", "2.5": "completed", "3": "completed", "4": "completed",
                "3p": "completed", "4p": "skipped", "4.5": "completed", "5": "completed", "6": "completed"}
            assert await a("validate") == {"valid": True, "errors": []}
            log = (await a("log", run_id="p"))["entries"]
            assert log[0]["commit"] == w.head == git.head(repo)
            assert len(log) == w.writes == 38  # with the checklists of 2.5 and 4.5 and the re-review contract (4 parts, its check)
            assert {e["actor"] for e in log} == {"pipeline_orchestrator", INTEGRITY, OBSERVER, "user"}
            assert {e["by"] for e in log if e["actor"] == "user"} == {
                "user via pipeline_orchestrator (mcp-elicitation, client mcp 0.1.0)"}
            answered = [e for e in (await a("show", run_id="p", history=True))["history"]["checkpoints"]
                        if e["event"] == "answered"]
            assert [(e["stage"], e["answered_by"]) for e in answered if e["type"] == "MANDATORY"] == [
                ("2.5", "user"), ("3", "user"), ("3p", "user"), ("4.5", "user")]
            assert {e["answered_by"] for e in answered if e["type"] != "MANDATORY"} == {"pipeline_orchestrator"}
            assert len(user.asked) == 4
            # every move of the run is a tool of the default set (`statedir mcp` without --tools), the
            # re-review contract's `contract` too: a default server drives a run to its end
            host = mcp_host(command_table())
            async with Client(build(store, host, catalog.DEFAULT)) as default:  # type: ignore[arg-type]
                served = {t.name for t in (await default.list_tools()).tools}
            assert w.tools <= served, w.tools - served
    anyio.run(main)
    shown = cli("status", "p", "--store", str(store), "--line")
    assert shown.returncode == 0 and "Pipeline:" in shown.stdout
    # committed in-process (libgit2): the same audit trail as git's own commits, nothing left staged
    verified = cli("verify", "--store", str(store))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo, capture_output=True,
                            text=True)
    assert status.stdout == ""

"""A whole academic run driven through MCP, counted in bytes: what an agent reads and writes to
take run `p` from `new` to `completed` (the stage sequence of `statedir demo`, as an agent that
calls `next` before each move and `show` at each new stage does, with two refusals on the way).

    .venv/bin/python bench/mcp_run.py [--tools GROUP,...]

One store in a temp dir, the server in-process (the SDK's client on statedir's server, a user
answering every MANDATORY checkpoint). Bytes exchanged: the `tools/list` result read once, and
each call's request parameters and result, as statedir.mcp.server.wire_bytes counts them (what
goes over the wire, less the JSON-RPC envelope; bench/mcp.py counts the tool list the same way).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402

from statedir import api  # noqa: E402
from statedir.cli.registry import command_table  # noqa: E402
from statedir.mcp import catalog, server  # noqa: E402
from statedir.mcp.host import mcp_host  # noqa: E402
from statedir.mcp.server import wire_bytes  # noqa: E402

ORCHESTRATOR, INTEGRITY, OBSERVER = "pipeline_orchestrator", "integrity_verification", "collaboration_depth_agent"
CLEAR = [f"{mode}=CLEAR" for mode in range(1, 8)]  # a failure-mode checklist that finds nothing
PAPER = "## Abstract\n## References\n"  # the fields the template's schema check asks of a draft
RESEARCH = "## Research question\n## Methodology\n## References\n## Synthesis\n"  # and of stage 1's


class Counted:
    """An agent's client counting what it sends and reads."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.bytes = {"tools/list": 0, "calls": 0}
        self.calls = self.refusals = 0
        self.head: str | None = None

    async def list_tools(self) -> int:
        listed = await self.client.list_tools()
        self.bytes["tools/list"] += wire_bytes(listed)
        return len(listed.tools)

    async def __call__(self, name: str, refused: bool = False, **arguments: Any) -> dict[str, Any]:
        if self.head is not None and name not in ("next", "show", "status", "get"):
            arguments.setdefault("expect_head", self.head)
        params = types.CallToolRequestParams(name=name, arguments=arguments)
        result = await self.client.call_tool(name, arguments)
        self.bytes["calls"] += wire_bytes(params) + wire_bytes(result)
        self.calls += 1
        doc = result.structured_content
        if doc is None:
            doc = json.loads(result.content[0].text)
        assert result.is_error == refused, (name, arguments, doc)
        self.refusals += refused
        if not refused and isinstance(doc.get("commit"), str):
            self.head = doc["commit"]
        return doc


async def answer(context: Any, params: Any) -> types.ElicitResult:
    fields = params.requested_schema["properties"]
    wanted = "review" if "review" in fields["response"]["enum"] and "3 " in params.message[:40] else None
    content = {name: spec.get("default", spec["enum"][0]) for name, spec in fields.items()}
    return types.ElicitResult(action="accept", content={**content, **({"response": wanted} if wanted else {})})


async def drive(a: Counted, files: Path) -> None:
    def artifact(name: str, text: str) -> list[str]:
        (files / name).write_text(text)
        subprocess.run(["git", "add", str(files / name)], cwd=files.parent, check=True)
        return [f"artifacts/{name}"]

    async def move(name: str, **arguments: Any) -> dict[str, Any]:
        await a("next", run_id="p")
        return await a(name, **arguments)

    (files / "observer.json").write_text(json.dumps({"zone": "Zone 2", "advisory_only": True,
                                                     "scores": {"delegation_intensity": 4}}))
    await a("new", run_id="p", topic="AI and higher-education quality assurance")
    await a("show", run_id="p")
    await move("stage", run_id="p", stage="1", status="in_progress", mode="socratic", turns="#3..#3")
    await move("material", run_id="p", names=["rq_brief", "methodology_blueprint", "bibliography",
                                              "synthesis_report"], file=artifact("r.md", RESEARCH))
    await move("stage", run_id="p", stage="1", status="completed", turns="#3..#15", output=["rq_brief"])
    await a("confirm", refused=True, run_id="p", next="3")  # the graph never lets RESEARCH jump to REVIEW
    await move("observe", run_id="p", stage="1", checkpoint="FULL", report="artifacts/observer.json",
               actor=OBSERVER)
    await move("confirm", run_id="p", response="continue")
    await a("show", run_id="p")
    await move("material", run_id="p", names=["paper_draft"], file=artifact("d.md", PAPER), upstream=["research_v1"])
    await move("stage", run_id="p", stage="2", status="completed", mode="plan -> full", output=["paper_draft"])
    await move("confirm", run_id="p", response="continue")
    await a("show", run_id="p")
    await move("integrity", run_id="p", stage="2.5", verdict="FAIL", refs_total=62, refs_verified=59,
               issue=["SERIOUS:reference:Incorrect DOI"], actor=INTEGRITY)
    await move("integrity", run_id="p", stage="2.5", verdict="PASS", refs_total=62, refs_verified=62,
               issues_found=1, issues_fixed=1, actor=INTEGRITY)
    await move("checklist", run_id="p", stage="2.5", item=CLEAR, actor=INTEGRITY)
    await move("stage", run_id="p", stage="2.5", status="completed")
    await move("confirm", run_id="p", response="continue")
    await a("show", run_id="p")
    await move("material", run_id="p", names=["review_reports"], file=artifact("rv.md", "## Recommendation\n"))
    await move("material", run_id="p", names=["revision_roadmap"], file=artifact("rm.md", "## Revision items\n"))
    await move("stage", run_id="p", stage="3", status="completed", decision="major_revision")
    await move("confirm", run_id="p", response="review")
    await a("show", run_id="p")
    await move("material", run_id="p", names=["revised_draft"], file=artifact("d2.md", PAPER + "v2\n"),
               upstream=["review_v1", "roadmap_v1"])
    await move("revision", run_id="p", items_total=5, items_addressed=5)
    await move("stage", run_id="p", stage="4", status="completed")
    await move("confirm", run_id="p", response="continue")
    await a("show", run_id="p")
    await move("material", run_id="p", names=["re_review_report"], file=artifact("rr.md", "## Recommendation\n"))
    for part in ("manifest", "criteria", "evidence", "claims"):  # the re-review contract (control group)
        await move("contract", run_id="p", stage="3p", part=part, file=artifact(f"{part}.md", f"{part}\n")[0])
    await move("contract", run_id="p", stage="3p", part="check", file=artifact("check.md", "ok\n")[0], exit_code=0)
    await move("stage", run_id="p", stage="3p", status="completed", decision="accept")
    await move("confirm", run_id="p", response="continue")
    await a("show", run_id="p")
    await move("integrity", run_id="p", stage="4.5", verdict="PASS", refs_total=64, refs_verified=64,
               issues_found=0, actor=INTEGRITY)
    await move("checklist", run_id="p", stage="4.5", item=CLEAR, actor=INTEGRITY)
    await move("stage", run_id="p", stage="4.5", status="completed")
    await move("confirm", run_id="p", response="continue")
    await a("show", run_id="p")
    await move("material", run_id="p", names=["final_paper"], file=artifact("f.md", PAPER + "final\n"))
    await move("stage", run_id="p", stage="5", status="completed", output=["final_paper"])
    await move("confirm", run_id="p", response="continue")
    await move("confirm", run_id="p", response="done")
    await a("stage", refused=True, run_id="p", stage="1", status="in_progress")
    assert (await a("get", run_id="p", path="pipeline_state"))["result"] == "completed"


async def measure(store: Path, groups: tuple[str, ...] | None) -> Counted:
    """The run driven by one server acting in the three agents' roles (in use, each agent has its
    own server: the calls are the same), the tool list counted as `statedir mcp` lists it (one role)."""
    groups = groups if groups is not None else catalog.DEFAULT
    async with Client(server.build(store, mcp_host(command_table()), groups)) as client:  # type: ignore[arg-type]
        listing = Counted(client)
        tools = await listing.list_tools()
    # the same groups: every move of the run is a tool of the default set (the re-review contract's too)
    built = server.build(store, mcp_host(command_table()), groups, roles=(ORCHESTRATOR, INTEGRITY, OBSERVER))
    async with Client(built, elicitation_callback=answer) as client:  # type: ignore[arg-type]
        a = Counted(client)
        a.bytes["tools/list"], a.tools = listing.bytes["tools/list"], tools  # type: ignore[attr-defined]
        await drive(a, store.parent / "artifacts")
    return a


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default=None, help="groups to serve (default: what `statedir mcp` serves)")
    opts = parser.parse_args()
    groups = catalog.chosen_groups(opts.tools) if opts.tools else None
    for var, value in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@x"),
                       ("GIT_COMMITTER_NAME", "bench"), ("GIT_COMMITTER_EMAIL", "bench@x")):
        os.environ.setdefault(var, value)
    with tempfile.TemporaryDirectory(prefix="statedir-bench-mcp-run-") as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        api.init(repo / "state")
        (repo / "artifacts").mkdir()
        a = anyio.run(measure, repo / "state", groups)
    total = sum(a.bytes.values())
    print(f"tools/list: {a.tools} tools, {a.bytes['tools/list']:,} bytes")  # type: ignore[attr-defined]
    print(f"calls: {a.calls} ({a.refusals} refused), {a.bytes['calls'] / 1000:.1f} kB")
    print(f"bytes exchanged for the whole run: {total / 1000:.1f} kB")


if __name__ == "__main__":
    main()

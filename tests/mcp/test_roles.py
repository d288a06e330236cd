"""A server that is one agent (statedir.mcp.roles): its callers act in the roles it was started with
(`statedir mcp --role`, default pipeline_orchestrator), never as the user; every commit it makes names
the calling client (Statedir-Client, from the handshake's clientInfo)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from statedir import api
from statedir import open as statedir_open
from statedir.errors import InvalidId, InvalidValue
from statedir.mcp import roles
from tests.support.mcp_session import ToolError, User, agent
from tests.support.util import CLEAR_ITEMS, copy_of, snapshot, trailers

INTEGRITY = "integrity_verification"


def at_the_checkpoint(sd: api.StateDir) -> None:
    sd.new("p", topic="T", entry_point="2.5")
    sd.material("p", ["paper_draft"])
    sd.stage("p", "2.5", "in_progress")


@pytest.fixture
def store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run p at stage 2.5 in progress: an integrity verdict is the next move."""
    copy_of("roles-2.5-in-progress", at_the_checkpoint, repo, tmp_path_factory)
    return repo / "state"


VERDICT = {"run_id": "p", "stage": "2.5", "verdict": "PASS", "refs_total": 1, "refs_verified": 1}


def test_a_server_started_without_options_cannot_record_an_integrity_verdict(store: Path, repo: Path) -> None:
    before = snapshot(repo)

    async def main() -> None:
        async with agent(store) as a:
            with pytest.raises(ToolError) as caught:
                await a("integrity", **VERDICT, actor=INTEGRITY)
            assert caught.value.code == "PERMISSION_DENIED"
            assert "this server acts as pipeline_orchestrator only, not integrity_verification" in \
                caught.value.doc["error"]["message"]
            assert caught.value.doc["error"]["details"]["allowed"] == ["pipeline_orchestrator"]
            with pytest.raises(ToolError) as own:  # and as itself the template refuses it, naming who may
                await a("integrity", **VERDICT)
            assert own.value.code == "PERMISSION_DENIED"
            assert "pipeline_orchestrator may not record integrity verdicts" in own.value.doc["error"]["message"]
            assert "integrity_verification" in own.value.doc["error"]["message"]
            # over MCP: whose server does it, and the move that fixes it is the integrity agent's, never a redo
            assert "on a server started for its role (`statedir mcp --role integrity_verification`)" in \
                own.value.doc["error"]["message"]
            moves = own.value.doc["error"]["details"]["moves"]
            assert [(m["command"], m["actor"]) for m in moves] == [("integrity", INTEGRITY)], moves

    anyio.run(main)
    assert snapshot(repo) == before


def test_no_mcp_caller_may_claim_the_user(store: Path, repo: Path) -> None:
    api.StateDir(store).integrity("p", "2.5", "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
    api.StateDir(store).checklist("p", "2.5", CLEAR_ITEMS, actor="integrity_verification")
    api.StateDir(store).stage("p", "2.5", "completed")
    before = snapshot(repo)
    user = User(response="continue")

    async def main() -> None:
        async with agent(store, user=user) as a:
            with pytest.raises(ToolError) as caught:
                await a("confirm", run_id="p", response="continue", actor="user")
            assert caught.value.code == "PERMISSION_DENIED"
            assert "never gives the user's answer" in caught.value.doc["error"]["message"]

    anyio.run(main)
    assert user.asked == [] and snapshot(repo) == before


def test_a_server_for_the_integrity_agent_acts_as_it_by_default(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store, roles=(INTEGRITY,)) as a:
            listed = {t.name: t.input_schema for t in (await a.client.list_tools()).tools}
            assert listed["integrity"]["properties"]["actor"]["enum"] == [INTEGRITY]
            await a("integrity", **VERDICT)
            with pytest.raises(ToolError) as caught:  # what the role may not do, the template refuses
                await a("stage", run_id="p", stage="2.5", status="completed")
            assert "integrity_verification may not update stages" in caught.value.doc["error"]["message"]

    anyio.run(main)
    assert trailers(repo)["Statedir-Actor"] == INTEGRITY


def test_a_server_started_for_a_persons_name_acts_in_no_persons_role(store: Path, repo: Path) -> None:
    """`statedir mcp --role carol`, carol a person (statedir people) whose one role is the user: the
    server's callers name roles only, so carol is a role no template declares, never the user."""
    sd = statedir_open(store)
    sd.add_person("carol", ["user"])
    before = snapshot(repo)

    async def main() -> None:
        async with agent(store, roles=("carol",)) as a:
            with pytest.raises(ToolError) as caught:
                await a("stage", run_id="p", stage="2.5", status="completed")
            assert caught.value.code == "PERMISSION_DENIED"
            assert "carol is no role of template academic-pipeline" in caught.value.doc["error"]["message"]
            assert not any(t.name.startswith("people") for t in (await a.client.list_tools()).tools)

    anyio.run(main)
    assert snapshot(repo) == before


def test_each_client_is_named_in_the_commits_it_makes(store: Path, repo: Path) -> None:
    shas = []

    async def main() -> None:
        for name, version in [("mcpagent-A", "1.0"), ("mcpagent-B\nStatedir-Actor: user", "2.0")]:
            async with agent(store, client_info=types.Implementation(name=name, version=version)) as a:
                shas.append((await a("set", run_id="p", field="topic", value=name[:10], reason="r"))["commit"])

    anyio.run(main)
    first, second = trailers(repo, shas[0]), trailers(repo, shas[1])
    assert (first["Statedir-Client"], first["Statedir-Actor"]) == ("mcpagent-A 1.0", "pipeline_orchestrator")
    assert (second["Statedir-Client"], second["Statedir-Actor"]) == ("mcpagent-B_Statedir-Actor_user 2.0",
                                                                      "pipeline_orchestrator")
    log = api.StateDir(store).log("p", limit=2)
    assert [e["client"] for e in log] == ["mcpagent-B_Statedir-Actor_user 2.0", "mcpagent-A 1.0"]
    assert api.StateDir(store).verify()["clean"]


def test_the_name_the_server_was_started_with_is_the_clients_record(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store, client_name="writer-bot",
                         client_info=types.Implementation(name="claims-anything", version="3")) as a:
            await a("set", run_id="p", field="topic", value="x", reason="r")

    anyio.run(main)
    assert trailers(repo)["Statedir-Client"] == "writer-bot 3"


def test_research_and_bus_writes_default_to_the_servers_role(store: Path, repo: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            await a("research_start_run", skill="deep-research", question="Does X cause Y?")
            assert trailers(repo)["Statedir-Actor"] == "pipeline_orchestrator"
            made = await a("bus_init", session="2026-06-30-roles")
            await a("bus_set", session=made["path"], field="owner", value="ana")
            assert trailers(repo)["Statedir-Actor"] == "pipeline_orchestrator"
            with pytest.raises(ToolError) as caught:
                await a("bus_set", session=made["path"], field="owner", value="bo", actor="architect")
            assert caught.value.code == "PERMISSION_DENIED"

    anyio.run(main)


def test_the_roles_a_server_is_started_with_are_checked() -> None:
    assert roles.chosen_roles("pipeline_orchestrator, integrity_verification") == (
        "pipeline_orchestrator", INTEGRITY)
    with pytest.raises(InvalidValue, match="never acts as the user"):
        roles.chosen_roles("pipeline_orchestrator,user")
    with pytest.raises(InvalidValue, match="state_tracker is statedir itself"):
        roles.chosen_roles("pipeline_orchestrator,state_tracker")  # it started, then refused every call
    with pytest.raises(InvalidId):
        roles.chosen_roles("two words")
    with pytest.raises(InvalidValue):
        roles.chosen_roles(" , ")


@pytest.mark.parametrize(("option", "code"), [("user", "INVALID_VALUE"), ("state_tracker", "INVALID_VALUE"),
                                             ("a\u202eb", "INVALID_ID")])
def test_statedir_mcp_refuses_a_role_it_may_never_take(repo: Path, option: str, code: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "statedir", "mcp", "--role", option], cwd=repo,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 2 and code in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)

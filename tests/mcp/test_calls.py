"""The served store over MCP: a path that is no store (yet, or any more) is each call's NOT_A_STORE
with the fix, never a crash at start-up; the `init` tool makes the store there, and on an existing
store changes nothing and says so."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from statedir import api
from statedir.gitops import git
from tests.support.mcp_session import ToolError, agent, document
from tests.support.util import snapshot


def params(store: Path | None, cwd: Path | None = None) -> StdioServerParameters:
    args = ["-m", "statedir", "mcp", "--tools", "all"] + (["--store", str(store)] if store else [])
    return StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ), cwd=cwd)


async def call(client: Client, name: str, **arguments: Any) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    return bool(result.is_error), document(result)


@pytest.mark.slow  # a server process over stdio
def test_a_path_that_is_no_store_is_served_and_each_call_says_how_to_fix_it(repo: Path) -> None:
    store = repo / "not-yet"

    async def main() -> None:
        async with Client(params(store)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"init", "new", "show"} <= names
            for name, arguments in [("runs", {}), ("show", {"run_id": "r1"}), ("new", {"run_id": "r1", "topic": "T"})]:
                failed, doc = await call(client, name, **arguments)
                assert failed and doc["error"]["code"] == "NOT_A_STORE", doc
                assert "`init`" in doc["error"]["message"] and doc["error"]["details"]["fix"] == "init"
            assert not store.exists()
            failed, made = await call(client, "init")
            assert not failed and made["created"] is True
            failed, made = await call(client, "new", run_id="r1", topic="T")
            assert not failed and made["commit"] == git.head(repo)
            failed, again = await call(client, "init")
            assert not failed and again["created"] is False
            failed, run = await call(client, "research_start_run", skill="deep-research", question="Q?")
            assert not failed and run["skill"] == "deep-research"
            failed, doc = await call(client, "research_complete_run", run_id="run_nowhere", status="completed")
            assert failed and doc["error"]["code"] == "UNKNOWN_RUN" and set(doc["error"]) == {"code", "message",
                                                                                                "details"}
    anyio.run(main)
    assert (store / "statedir.yaml").is_file()


@pytest.mark.slow  # a server process over stdio
def test_without_a_store_anywhere_init_makes_one_where_the_cli_would(isolated: Path) -> None:
    async def main() -> None:
        async with Client(params(None, cwd=isolated)) as client:
            failed, doc = await call(client, "status", run_id="r1")
            assert failed and doc["error"]["code"] == "NOT_A_STORE"
            failed, made = await call(client, "init")
            assert not failed and made["created"] is True
    anyio.run(main)
    assert (isolated / "state" / "statedir.yaml").is_file()


def test_init_on_the_served_store_changes_nothing(repo: Path) -> None:
    api.init(repo / "state")
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(repo / "state") as a:
            assert (await a("init"))["created"] is False
            with pytest.raises(ToolError) as refused:
                await a("init", directory="elsewhere")  # the server serves one path
            assert refused.value.code == "INVALID_VALUE"
    anyio.run(main)
    assert snapshot(repo) == saved


def test_a_store_that_goes_away_is_each_calls_error_and_comes_back_with_init(repo: Path) -> None:
    store = repo / "state"
    api.init(store)

    async def main() -> None:
        async with agent(store) as a:
            await a("new", run_id="r1", topic="T")
            shutil.rmtree(store)
            for _ in range(2):
                with pytest.raises(ToolError) as refused:
                    await a("status", run_id="r1")
                assert refused.value.code == "NOT_A_STORE" and refused.value.doc["error"]["details"]["fix"] == "init"
            assert (await a("init"))["created"] is True
            assert (await a("runs")) == []
    anyio.run(main)


def test_a_store_edited_or_cut_from_its_repository_since_is_read_again(repo: Path) -> None:
    """The server reads the store's configuration again when it changed: a broken one is each
    call's error until it is mended; a store whose repository went away is NOT_A_STORE saying so
    (no `init` fix: it would change nothing there)."""
    store = repo / "state"
    api.init(store)
    config = (store / "statedir.yaml").read_bytes()

    async def main() -> None:
        async with agent(store) as a:
            await a("new", run_id="r1", topic="T")
            (store / "statedir.yaml").write_text("default_template: [")
            with pytest.raises(ToolError) as refused:
                await a("new", run_id="r2", topic="T")
            assert refused.value.code in ("CORRUPT_STORE", "BAD_FILE")
            (store / "statedir.yaml").write_bytes(config)
            assert (await a("new", run_id="r2", topic="T"))["run_id"] == "r2"
            shutil.rmtree(repo / ".git")
            for _ in range(2):
                with pytest.raises(ToolError) as refused:
                    await a("status", run_id="r1")
                error = refused.value.doc["error"]
                assert error["code"] == "NOT_A_STORE" and "git work tree" in error["message"], error
                assert "fix" not in error["details"]
    anyio.run(main)

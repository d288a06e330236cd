"""What an agent reads over MCP stays small, and what it names is found where it says: `log` a page
at a time (limit + cursor, next_cursor), `show` without the histories unless asked, file arguments
relative to the repository root (never the server's working directory), a path leaving the
repository refused with nothing changed."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from statedir import api
from statedir.gitops import git
from tests.support.mcp_session import ToolError, agent, document
from tests.support.util import cli, snapshot


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    sd.new("r1", topic="T")
    sd.stage("r1", "1", "in_progress")
    return repo / "state"


def test_log_is_read_a_page_at_a_time_and_a_commit_meanwhile_shifts_nothing(store: Path, repo: Path) -> None:
    sd = api.StateDir(store)
    for n in range(5):
        sd.set("r1", "topic", f"T{n}", reason="retitled")
    everything = sd.log()
    assert len(everything) == 8

    async def main() -> list[dict[str, Any]]:
        async with agent(store) as a:
            page = await a("log", limit=3)
            assert set(page) == {"entries", "next_cursor"} and len(page["entries"]) == 3
            seen = list(page["entries"])
            sd.set("r1", "topic", "later", reason="meanwhile")  # a new commit between pages
            while page["next_cursor"] is not None:
                page = await a("log", limit=3, cursor=page["next_cursor"])
                seen += page["entries"]
            newest = (await a("log"))["entries"][0]  # by default, from the newest
            assert newest["summary"] == sd.log(limit=1)[0]["summary"]
            with pytest.raises(ToolError) as refused:
                await a("log", cursor="HEAD~2")
            assert refused.value.code == "INVALID_VALUE"
            return seen
    seen = anyio.run(main)
    assert seen == everything


def test_log_pages_filter_too_and_the_cli_pages_with_cursor(store: Path) -> None:
    sd = api.StateDir(store)
    for n in range(3):
        sd.set("r1", "topic", f"T{n}", reason="retitled")
    sets = sd.log(action="set")

    async def main() -> list[dict[str, Any]]:
        async with agent(store) as a:
            first = await a("log", action="set", limit=2)
            second = await a("log", action="set", limit=2, cursor=first["next_cursor"])
            assert second["next_cursor"] is None
            return first["entries"] + second["entries"]
    assert anyio.run(main) == sets
    proc = cli("log", "--cursor", "start", "--limit", "2", "--json", "--store", str(store))
    page = json.loads(proc.stdout)
    assert proc.returncode == 0 and len(page["entries"]) == 2 and page["next_cursor"]
    unchanged = json.loads(cli("log", "--limit", "2", "--json", "--store", str(store)).stdout)
    assert unchanged == page["entries"]  # without --cursor, the CLI's list as before


def test_show_is_the_current_stage_and_what_it_needs_the_whole_run_on_request(store: Path) -> None:
    sd = api.StateDir(store)
    sd.set("r1", "topic", "T2", reason="retitled")
    whole = sd.show("r1")
    assert whole["history"]

    async def main() -> None:
        async with agent(store) as a:
            brief = await a("show", run_id="r1")
            current = whole["current_stage"]
            assert "history" not in brief and brief["stages"] == {k: v["status"] for k, v in whole["stages"].items()}
            assert brief["stage"] == {k: v for k, v in whole["stages"][current].items() if v not in (None, [], {})}
            assert brief["needs"] == {"missing_required": [], "missing_recommended": []}
            assert (brief["run_id"], brief["topic"], brief["pipeline_state"]) == ("r1", "T2", whole["pipeline_state"])
            assert len(json.dumps(brief)) * 3 < len(json.dumps(sd.show("r1", history=False)))
            assert (await a("show", run_id="r1", whole=True)) == sd.show("r1", history=False)
            assert (await a("show", run_id="r1", whole=True, history=True)) == whole
            ars = await a("show", run_id="r1", format="ars")
            assert "revision_history" not in ars and "integrity_history" not in ars
    anyio.run(main)
    assert json.loads(cli("show", "r1", "--json", "--store", str(store)).stdout) == whole  # the CLI: unchanged
    assert "history" not in json.loads(cli("show", "r1", "--no-history", "--json", "--store", str(store)).stdout)


def test_file_arguments_say_they_are_relative_to_the_repository_root(store: Path) -> None:
    async def main() -> None:
        async with agent(store) as a:
            listed = {t.name: t.input_schema["properties"] for t in (await a.client.list_tools()).tools}
            for tool, argument in [("material", "file"), ("observe", "report"), ("seal", "artifact_root"),
                                   ("seal", "bindings"), ("bus_init", "clean")]:
                assert "relative to the repository root" in listed[tool][argument]["description"], (tool, argument)
    anyio.run(main)


def test_a_file_is_found_at_the_repository_root_whatever_the_servers_directory(
        store: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "drafts").mkdir()
    (repo / "drafts" / "rq.md").write_text("RQ\n")
    elsewhere = repo / "state" / "runs"
    monkeypatch.chdir(elsewhere)  # the server's working directory is not the repository root

    async def main() -> None:
        async with agent(store) as a:
            made = await a("material", run_id="r1", names=["rq_brief"], file=["drafts/rq.md"])
            assert made["version_label"] == "research_v1"
    anyio.run(main)
    passport = api.StateDir(store).show("r1")["passports"]
    assert json.dumps(passport).count('"drafts/rq.md"') == 1


def test_a_path_leaving_the_repository_is_refused_and_nothing_changes(store: Path, repo: Path,
                                                                      tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    (repo / "link.md").symlink_to(outside)
    (repo / "report.json").write_text("{}")
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(store) as a:
            for arguments, argument in [
                    ({"names": ["rq_brief"], "file": ["../outside.md"]}, "file"),
                    ({"names": ["rq_brief"], "file": [str(outside)]}, "file"),
                    ({"names": ["rq_brief"], "file": ["link.md"]}, "file"),
                    ({"names": ["rq_brief"], "file": ["drafts/../../outside.md"]}, "file")]:
                with pytest.raises(ToolError) as refused:
                    await a("material", run_id="r1", **arguments)
                error = refused.value.doc["error"]
                assert error["code"] == "INVALID_VALUE" and error["details"]["argument"] == argument, error
                assert "leads out of the repository" in error["message"]
            with pytest.raises(ToolError) as refused:
                await a("observe", run_id="r1", stage="1", checkpoint="FULL", report="/etc/passwd")
            assert refused.value.doc["error"]["details"]["argument"] == "report"
    anyio.run(main)
    assert snapshot(repo) == saved


@pytest.mark.slow  # a server process over stdio
def test_over_stdio_files_resolve_against_the_repository_not_the_servers_cwd(store: Path, repo: Path) -> None:
    (repo / "notes.md").write_text("notes\n")
    (store / "runs" / "notes.md").write_text("a decoy in the server's working directory\n")
    server = StdioServerParameters(command=sys.executable, args=["-m", "statedir", "mcp", "--store", str(store),
                                                                 "--tools", "all"],
                                   env=dict(os.environ), cwd=store / "runs")

    async def main() -> None:
        async with Client(server) as client:
            result = await client.call_tool("material", {"run_id": "r1", "names": ["rq_brief"], "file": ["notes.md"]})
            assert not result.is_error, result.content[0].text
            page = document(await client.call_tool("log", {"limit": 1}))
            assert page["entries"][0]["commit"] == git.head(repo) and page["next_cursor"]
            brief = document(await client.call_tool("show", {"run_id": "r1"}))
            whole = document(await client.call_tool("show", {"run_id": "r1", "history": True}))
            assert "history" not in brief and whole["history"] and brief["stage"]["id"] == whole["current_stage"]
    anyio.run(main)
    files = api.StateDir(store).show("r1")["passports"]
    assert '"notes.md"' in json.dumps(files) and "runs/notes.md" not in json.dumps(files)


def test_an_argument_taking_a_path_or_a_name_reads_only_the_path_from_the_repository_root(
        store: Path, repo: Path) -> None:
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(store) as a:
            for tool, arguments in [("signers_add", {"bound": "x", "key": "../id.pub"}),
                                    ("new", {"run_id": "r2", "topic": "T", "template": "/etc/statedir.yaml"})]:
                with pytest.raises(ToolError) as refused:
                    await a(tool, **arguments)
                assert "leads out of the repository" in refused.value.doc["error"]["message"], tool
            assert snapshot(repo) == saved
            made = await a("new", run_id="r2", topic="T", template="academic-pipeline")  # a name: untouched
            assert made["run_id"] == "r2"
    anyio.run(main)


def test_a_path_with_a_blank_is_a_path_and_stays_inside_the_repository(store: Path, repo: Path, tmp_path: Path) -> None:
    """What is not a name (a key's text) is a path, blank or none: one rule for every argument taking
    either, the one its reader uses. A file outside the repository is never read, nor committed."""
    from statedir.engine import template

    outside = tmp_path / "evil dir"
    outside.mkdir()
    (outside / "evil.yaml").write_text(template.shipped()["linear"].read_text().replace("name: linear", "name: evil"))
    (outside / "id key.pub").write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKZpaoGX1HE8ewONwrYA2T8jE7ksQkLXBnp3aXyA9HqF x\n")
    (repo / "in dir").mkdir()
    (repo / "in dir" / "mine.yaml").write_text((outside / "evil.yaml").read_text().replace("name: evil", "name: mine"))
    saved = snapshot(repo)
    evil = str(outside / "evil.yaml")
    relative = os.path.relpath(evil, repo)

    async def main() -> None:
        async with agent(store) as a:
            for tool, arguments, argument in [
                    ("new", {"run_id": "r2", "topic": "T", "template": evil}, "template"),
                    ("new", {"run_id": "r2", "topic": "T", "template": relative}, "template"),
                    ("new", {"run_id": "r2", "topic": "T", "template": f"in dir/../{relative}"}, "template"),
                    ("templates", {"name": evil}, "name"), ("graph", {"template": evil}, "template"),
                    ("signers_add", {"bound": "x", "key": str(outside / "id key.pub")}, "key"),
                    ("signers_remove", {"bound": "x", "key": str(outside / "id key.pub")}, "key"),
                    ("bus_get", {"session": f"{outside}/2026-06-30-a b.yaml"}, "session")]:
                result = await a.client.call_tool(tool, arguments)  # `templates` takes a `name`, as a() does
                assert result.is_error, (tool, result.content[0].text)
                error = json.loads(result.content[0].text)["error"]
                assert error["code"] == "INVALID_VALUE" and error["details"]["argument"] == argument, (tool, error)
                assert "leads out of the repository" in error["message"], (tool, error)
            assert snapshot(repo) == saved
            made = await a("new", run_id="r2", topic="T", template="in dir/mine.yaml")  # inside: read, blank and all
            assert made["run_id"] == "r2"
    anyio.run(main)
    assert api.StateDir(store).show("r2")["template"] == "mine"


# Arguments whose help speaks of a path or a file that are not one the server reads: a path inside
# the artifact root or a role, a dotted path, flags about files.
NOT_A_FILE = {("bind", "path"), ("init", "branch"), ("bus_append", "check_path"), ("get", "path"),
              ("research_rebuild_index", "full"),
              ("research_record_result", "artifact_path"), ("research_record_result", "artifact_role"),
              ("signers_list", "allowed_signers"),
              ("validate", "schema"), ("validate", "skip_outside_stores"), ("validate", "verbose")}


def test_every_argument_naming_a_file_is_read_from_the_repository_root() -> None:
    """A table names the file arguments; this finds any the table forgot (a new command's)."""
    import re

    from statedir.cli.registry import command_table
    from statedir.mcp.host import mcp_host
    from statedir.mcp.served_tools import FILE_ARGUMENTS, PATH_OR_NAME, served

    for name, tool in served(mcp_host(command_table()).commands).items():
        for argument, schema in tool.input_schema["properties"].items():
            said = schema.get("description", "").split(". A path relative")[0].split(" As a path")[0]
            if (name, argument) in NOT_A_FILE or not re.search(r"file|folder|director|path", said, re.I):
                continue
            assert argument in (*FILE_ARGUMENTS.get(name, ()), *PATH_OR_NAME.get(name, {})), (name, argument)
            assert "relative to the repository root" in schema["description"], (name, argument)


def test_a_bus_session_named_by_its_files_path_is_found_from_the_repository_root(
        store: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(store / "runs")
    session = "2026-06-30-handoff"

    async def main() -> None:
        async with agent(store) as a:
            made = await a("bus_init", session=session)
            await a("bus_set", session=made["path"], field="owner", value="ana")
            relative = Path(made["path"]).relative_to(repo).as_posix()
            await a("bus_set", session=relative, field="topic", value="t")
            assert document(await a.raw("bus_get", session=session))["owner"] == "ana"
            with pytest.raises(ToolError) as refused:
                await a("bus_get", session="../elsewhere/2026-06-30-handoff.yaml")
            assert refused.value.doc["error"]["details"]["argument"] == "session"
    anyio.run(main)


def test_status_line_returns_only_the_line_over_mcp_and_with_the_clis_json(store: Path) -> None:
    whole = api.StateDir(store).status("r1")

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with agent(store) as a:
            return await a("status", run_id="r1", line=True), await a("status", run_id="r1")
    short, full = anyio.run(main)
    assert short == {"run_id": "r1", "line": whole["line"]}
    assert full["dashboard"] == whole["dashboard"] and full["stages"]
    assert json.loads(cli("status", "r1", "--line", "--json", "--store", str(store)).stdout) == short
    assert json.loads(cli("status", "r1", "--json", "--store", str(store)).stdout)["dashboard"] == whole["dashboard"]

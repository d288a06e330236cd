"""What an agent reads of the MCP server is precise: every tool has a title, the four hints, an
input schema with enums where its values form a vocabulary (the store's templates' own) and an
output schema its structured content keeps to; descriptions and refusals speak the tools' own
argument names, never the command line's flags; `--tools` serves chosen groups. Through the
SDK's client (in-process here, over stdio in test_server_stdio.py)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from statedir import api
from statedir.cli.registry import command_table
from statedir.engine import template
from statedir.mcp import catalog
from statedir.mcp.catalog import HINT_DEFAULTS, WRITES_ONLY
from statedir.mcp.host import mcp_host
from statedir.mcp.server import INSTRUCTIONS, build
from tests.support.mcp_session import ToolError, agent, document
from tests.support.util import CLEAR_ITEMS, cli, snapshot

ROOT = Path(__file__).resolve().parents[2]
TOOL_NAMES = {*catalog.TITLES, "init", "mcp", "demo", "agents"}  # every command's name
# Arguments whose values form a vocabulary, by name: each must be an enum wherever a tool takes it.
VOCABULARY = {"status", "verdict", "response", "decision", "format", "checkpoint", "next", "entry_point", "family",
              "unavailable", "role", "stance", "confidence", "screening_status"}
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
COMMAND = re.compile(r"\bstatedir ((?:bus |signers )?[a-z][a-z-]*)")


@pytest.fixture
def store(repo: Path, sd: api.StateDir) -> Path:
    """A new store (sd's copy of the session's fresh one, not made by init again)."""
    return repo / "state"


def listed(store: Path, groups: tuple[str, ...] = catalog.GROUPS) -> list[types.Tool]:
    async def main() -> list[types.Tool]:
        async with Client(build(store, mcp_host(command_table()), groups)) as client:  # type: ignore[arg-type]
            return (await client.list_tools()).tools
    return anyio.run(main)


def _values(prop: dict[str, Any]) -> list[str] | None:
    return prop.get("enum") or prop.get("items", {}).get("enum")


class Hints:
    """A tool's four hints as a client reads them: each hint the list leaves out is the protocol's
    default, and a read-only tool is neither destructive and idempotent (the protocol reads those
    two only on a write)."""

    def __init__(self, annotations: types.ToolAnnotations) -> None:
        said = annotations.model_dump(exclude_none=True)
        self.read_only_hint = said.get("read_only_hint", HINT_DEFAULTS["read_only_hint"])
        writes = {} if self.read_only_hint else HINT_DEFAULTS
        self.destructive_hint = said.get("destructive_hint", writes.get("destructive_hint", False))
        self.idempotent_hint = said.get("idempotent_hint", writes.get("idempotent_hint", True))
        self.open_world_hint = said.get("open_world_hint", HINT_DEFAULTS["open_world_hint"])


def test_every_tool_has_a_title_four_hints_and_an_output_schema(store: Path) -> None:
    tools = {t.name: t for t in listed(store)}
    assert len(tools) >= 39
    for name, tool in tools.items():
        assert tool.title and tool.annotations is not None, name
        said = tool.annotations.model_dump(exclude_none=True)
        # only what differs from the protocol's defaults is said (every agent reads every tool's hints)
        assert all(value != HINT_DEFAULTS[hint] for hint, value in said.items()), (name, said)
        assert not (said.get("read_only_hint") and set(said) & WRITES_ONLY), (name, said)
        hints = Hints(tool.annotations)
        assert not (hints.read_only_hint and hints.destructive_hint), name
        assert not hints.read_only_hint or hints.idempotent_hint, name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
    # each hint chosen: ending a run and going back in it destroy; reads are safe to repeat;
    # only sync leaves the repository
    for name in ("pipeline", "rollback", "redo", "bus_clear"):
        assert Hints(tools[name].annotations).destructive_hint, name
    for name in ("material", "integrity", "stage", "new", "observe", "bus_append"):
        assert not Hints(tools[name].annotations).destructive_hint, name
    for name in ("show", "get", "status", "next", "log"):
        hints = Hints(tools[name].annotations)
        assert hints.read_only_hint and hints.idempotent_hint and not hints.destructive_hint, name
    for name in ("material", "loop", "integrity", "bus_append", "confirm"):
        assert not Hints(tools[name].annotations).idempotent_hint, name
    assert {n for n, t in tools.items() if Hints(t.annotations).open_world_hint} == {"sync"}


def test_idempotent_writes_change_nothing_when_repeated(store: Path, repo: Path) -> None:
    """A write annotated idempotent, called again with the same arguments, makes no commit."""
    calls = [("new", {"run_id": "r1", "topic": "T"}),
             ("stage", {"run_id": "r1", "stage": "1", "status": "in_progress"}),
             ("set", {"run_id": "r1", "field": "topic", "value": "U", "reason": "r"}),
             ("pipeline", {"run_id": "r1", "state": "paused"}),
             ("bus_init", {"session": "2026-06-30-x"}),
             ("bus_set", {"session": "2026-06-30-x", "field": "a", "value": "b"}),
             ("bus_clear", {"session": "2026-06-30-x"})]
    tools = {t.name: t for t in listed(store)}

    async def main() -> None:
        async with agent(store) as a:
            for name, arguments in calls:
                assert Hints(tools[name].annotations).idempotent_hint, name
                await a(name, **arguments)
                head = a.head
                try:
                    await a(name, **arguments)
                except ToolError:
                    pass  # refused: the first call already did it
                assert a.head == head, f"{name} repeated made a commit"
    anyio.run(main)


def test_enums_wherever_values_form_a_vocabulary(store: Path) -> None:
    tools = {t.name: t for t in listed(store)}
    for name, tool in tools.items():
        for argument, prop in tool.input_schema["properties"].items():
            if (name, argument) == ("advisory", "unavailable"):  # a code of the advisory's own, no vocabulary
                continue
            if argument in VOCABULARY or (name, argument) in {("pipeline", "state"), ("observe", "stage"),
                                                               ("integrity", "stage"), ("stage", "stage")}:
                assert _values(prop), f"{name}.{argument} takes a vocabulary but lists none"

    def props(name: str) -> dict[str, Any]:
        return tools[name].input_schema["properties"]

    # the vocabularies of the templates the store holds, read through the `templates` tool (not the server's tables)
    async def described() -> list[dict[str, Any]]:
        async with agent(store) as a:
            rows = await a("templates")
            return [document(await a.client.call_tool("templates", {"name": row["name"]}))
                    for row in rows]
    held = anyio.run(described)
    union = lambda values: {v for t in held for v in values(t)}  # noqa: E731
    assert set(props("stage")["status"]["enum"]) == union(lambda t: [s["value"] for s in t["statuses"]])
    assert set(props("confirm")["response"]["enum"]) == union(lambda t: t["checkpoint_responses"])
    assert set(props("stage")["decision"]["enum"]) == union(lambda t: [d for s in t["stages"] for d in s["decisions"]])
    assert set(props("stage")["stage"]["enum"]) == union(lambda t: [s["id"] for s in t["stages"]])  # one spelling
    assert "3'" not in props("stage")["stage"]["enum"] and "3p" in props("stage")["stage"]["enum"]
    assert set(props("integrity")["stage"]["enum"]) == union(lambda t: [s["id"] for s in t["stages"] if s["integrity"]])
    assert set(props("pipeline")["state"]["enum"]) == union(
        lambda t: [t["pipeline_states"][r] for r in ("paused", "running", "aborted", "completed")])
    assert set(props("material")["names"]["items"]["enum"]) == union(lambda t: t["materials"])
    assert props("integrity")["verdict"]["enum"] == ["PASS", "PASS_WITH_NOTES", "FAIL"]
    assert props("show")["format"]["enum"] == ["yaml", "json", "ars"]
    assert props("graph")["format"]["enum"] == ["mermaid", "dot"]
    # a run's own values: said once, in the server's instructions, not on each of a dozen arguments
    assert "statedir://runs/<run_id>/stages" in INSTRUCTIONS and "`next`" in props("stage")["status"]["description"]


def test_enums_follow_the_store_s_own_templates(store: Path, repo: Path) -> None:
    """A template the store gains adds its vocabulary to the next tools/list: the enums are read
    from the store's templates, not written in the server."""
    before = {t.name: t for t in listed(store)}["stage"].input_schema["properties"]["status"]["enum"]
    assert "shipped" not in before
    text = template.shipped()["linear"].read_text()
    for old, new in (("name: linear", "name: relay"), ("in_progress", "working"), ("todo", "queued"),
                     (", done]", ", shipped]"), ("done: done", "done: shipped"), ("[done]", "[shipped]"),
                     ("{done: ", "{shipped: ")):
        text = text.replace(old, new)
    (store / "templates").mkdir(exist_ok=True)
    (store / "templates" / "relay.yaml").write_text(text)
    template.parse(text.encode(), "relay.yaml")  # a valid template

    async def main() -> None:
        async with Client(build(store, mcp_host(command_table()))) as client:  # type: ignore[arg-type]
            first = {t.name: t for t in (await client.list_tools()).tools}
            assert {"queued", "working", "shipped"} <= set(first["stage"].input_schema["properties"]["status"]["enum"])
            (store / "templates" / "relay.yaml").unlink()
            again = {t.name: t for t in (await client.list_tools()).tools}
            assert "shipped" not in again["stage"].input_schema["properties"]["status"]["enum"]
    anyio.run(main)


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # protocol 2026-07-28 and the one before it
def test_structured_content_is_the_document_and_keeps_to_the_output_schema(store: Path, repo: Path, mode: str) -> None:
    tools = {t.name: t for t in listed(store)}

    async def main() -> None:
        async with agent(store, mode) as a:
            calls = [("new", {"run_id": "r1", "topic": "T"}), ("runs", {}), ("get", {"run_id": "r1", "path": "topic"}),
                     ("status", {"run_id": "r1"}), ("next", {"run_id": "r1"}),
                     ("prereq", {"run_id": "r1", "stage": "2"}),
                     ("stage", {"run_id": "r1", "stage": "1", "status": "in_progress"}), ("log", {}),
                     ("show", {"run_id": "r1", "format": "json"}), ("templates", {}), ("verify", {}),
                     ("graph", {"run_id": "r1"}), ("bus_set", {"session": "2026-06-30-x", "field": "a", "value": "b"}),
                     ("bus_get", {"session": "2026-06-30-x", "field": "a"}), ("validate", {})]
            for name, arguments in calls:
                result = await a.raw(name, **arguments)
                assert not result.is_error, (name, result.content)
                doc = document(result)
                expected = doc if isinstance(doc, dict) and name not in ("get", "bus_get") else {"result": doc}
                assert result.structured_content == expected, name
                jsonschema.validate(result.structured_content, tools[name].output_schema)
            assert (await a.raw("get", run_id="r1", path="topic")).structured_content == {"result": "T"}
            missing = await a.raw("bus_get", session="2026-06-30-x", field="none")
            assert missing.structured_content == {"result": None}
            plain = await a.raw("signers_list", allowed_signers=True)  # text, here none: no signer yet
            assert not plain.is_error and plain.structured_content == {"text": ""}
            refused = await a.raw("show", run_id="nope")
            assert refused.is_error and refused.structured_content == json.loads(refused.content[0].text)
            assert set(refused.structured_content["error"]) == {"code", "message", "details"}
    anyio.run(main)


def _speaks_cli(text: str) -> list[str]:
    """The flags and `statedir COMMAND`s in `text` (prose such as "the statedir merge driver" aside)."""
    commands = [f"statedir {m}" for m in COMMAND.findall(text) if m.replace(" ", "_").replace("-", "_") in TOOL_NAMES]
    return FLAG.findall(text) + commands


def test_descriptions_speak_the_tools_argument_names(store: Path) -> None:
    for tool in listed(store):
        texts = [tool.description or "", *(p.get("description", "") for p in tool.input_schema["properties"].values())]
        for text in texts:
            assert not _speaks_cli(text), f"{tool.name}: {text!r}"
    tools = {t.name: t for t in listed(store)}
    assert "it needs reason" in tools["pipeline"].description  # was: it needs --reason
    assert "As of this commit" in tools["show"].input_schema["properties"]["at"]["description"]  # was: --at REV


@pytest.fixture
def paused(store: Path) -> Path:
    sd = api.StateDir(store)
    sd.new("r1", topic="T")
    sd.stage("r1", "1", "in_progress")
    sd.new("m", topic="T", entry_point="2.5")
    sd.material("m", ["paper_draft"])
    sd.stage("m", "2.5", "in_progress")
    sd.integrity("m", "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    sd.checklist("m", "2.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage("m", "2.5", "completed")  # its MANDATORY checkpoint open
    sd.new("p", topic="T")
    sd.pipeline("p", "paused")
    return store


def test_refusals_speak_the_tools_argument_names(paused: Path, repo: Path) -> None:
    saved = snapshot(repo)
    provoked = [  # (tool, arguments, code, what the message says instead of a flag or a command line)
        ("redo", {"run_id": "r1", "stage": "1"}, "INVALID_VALUE", "reason is required"),
        ("pipeline", {"run_id": "r1", "state": "aborted"}, "INVALID_VALUE", "a reason is required"),
        ("confirm", {"run_id": "m"}, "USER_ANSWER_REQUIRED", "with response continue or review"),
        ("confirm", {"run_id": "m", "response": "continue"}, "USER_ANSWER_REQUIRED", "`status {run_id: m}`"),
        ("stage", {"run_id": "r1", "stage": "2", "status": "in_progress"}, "ILLEGAL_TRANSITION",
         "(`stage {run_id: r1, stage: 1, status: completed}`), then move on with `confirm`"),
        ("stage", {"run_id": "p", "stage": "1", "status": "in_progress"}, "ILLEGAL_TRANSITION",
         "resume it with `pipeline {run_id: RUN, state: running}`"),
        ("new", {"run_id": "x"}, "INVALID_VALUE", "needs topic"),
        ("new", {"run_id": "x", "topic": "T", "entry_point": "4"}, "ILLEGAL_TRANSITION",
         "pass passport (VERIFIED"),
        ("show", {"run_id": "nope"}, "UNKNOWN_RUN", "see `runs`"),
        ("log", {"since": "someday"}, "INVALID_VALUE", "since 'someday' is not a date"),
        ("bus_get", {"session": "2026-06-30-none", "field": "a"}, "UNKNOWN_SESSION",
         "`bus_init {session: 2026-06-30-none}`"),
        ("rollback", {"run_id": "r1", "to": "HEAD~1", "reason": " "}, "INVALID_VALUE", "reason must say why"),
    ]

    async def main() -> None:
        async with agent(paused) as a:
            for name, arguments, code, said in provoked:
                with pytest.raises(ToolError) as caught:
                    await a(name, **arguments)
                error = caught.value.doc["error"]
                assert error["code"] == code, (name, error)
                assert said in error["message"] and not _speaks_cli(error["message"]), (name, error["message"])
            with pytest.raises(ToolError) as caught:  # the agent's own value, quoted back as it was written
                await a("stage", run_id="r1", stage="--reason", status="completed")
            assert "unknown stage '--reason'" in caught.value.doc["error"]["message"]
    anyio.run(main)
    assert snapshot(repo) == saved
    # the command line keeps its own words: translated at the MCP boundary only
    proc = cli("redo", "r1", "1", "--store", str(paused))
    assert proc.returncode == 2 and "--reason" in proc.stderr
    proc = cli("stage", "r1", "2", "in_progress", "--store", str(paused), "--json")
    assert "`statedir stage r1 1 completed`" in json.loads(proc.stdout)["error"]["message"]


def test_every_tool_belongs_to_exactly_one_group(store: Path) -> None:
    every = {t.name for t in listed(store)}
    by_group = {group: {t.name for t in listed(store, (group,))} for group in catalog.GROUPS}
    assert all(by_group.values()), by_group
    assert sorted(n for names in by_group.values() for n in names) == sorted(every)  # each once
    assert by_group["bus"] == {n for n in every if n.startswith("bus_")}
    assert by_group["signing"] == {n for n in every if n.startswith("signers_")}
    assert by_group["sync"] == {"sync"}
    assert {"log", "diff", "verify", "doctor", "rollback"} <= by_group["history"]
    assert {"new", "stage", "confirm", "next", "show", "status"} <= by_group["pipeline"]
    assert all(n == "research" or n.startswith("research_") for n in by_group["research"]) and by_group["research"]


def test_tools_serves_only_the_chosen_groups(store: Path, repo: Path) -> None:
    names = {t.name for t in listed(store, ("history", "sync"))}
    assert names == {"log", "diff", "verify", "doctor", "rollback", "validate", "sync"}

    async def main() -> None:
        async with Client(build(store, mcp_host(command_table()), ("bus",))) as client:  # type: ignore[arg-type]
            result = await client.call_tool("new", {"run_id": "r1", "topic": "T"})
            doc = document(result)
            assert result.is_error and doc["error"]["code"] == "INVALID_VALUE"
            assert "unknown tool 'new'; this server serves bus_append" in doc["error"]["message"]
    saved = snapshot(repo)
    anyio.run(main)
    assert snapshot(repo) == saved


@pytest.mark.slow  # a server process over stdio
def test_over_stdio_tools_serves_the_chosen_groups_each_described(store: Path) -> None:
    """`statedir mcp --tools history,bus` as a real subprocess, driven by the SDK's stdio client."""
    server = StdioServerParameters(command=sys.executable, args=["-m", "statedir", "mcp", "--store", str(store),
                                                                 "--tools", "history,bus"], env=dict(os.environ))

    async def main() -> None:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"log", "diff", "verify", "doctor", "rollback", "validate", "bus_append", "bus_clear",
                                  "bus_get", "bus_init", "bus_set"}
            for tool in tools.values():
                assert tool.title and tool.output_schema and tool.annotations is not None
            made = await client.call_tool("bus_set", {"session": "2026-06-30-x", "field": "a", "value": "b"})
            assert not made.is_error and made.structured_content["summary"] == "2026-06-30-x: a = b"
            trail = await client.call_tool("log", {})
            assert not trail.is_error and trail.structured_content is not None
            refused = await client.call_tool("stage", {"run_id": "r", "stage": "1", "status": "in_progress"})
            assert refused.is_error and refused.structured_content["error"]["code"] == "INVALID_VALUE"
    anyio.run(main)


def test_an_unknown_group_is_refused_naming_the_groups(store: Path) -> None:
    proc = cli("mcp", "--store", str(store), "--tools", "pipeline,histry")
    assert proc.returncode == 2 and not proc.stdout
    assert ("unknown tool group 'histry'; the groups are pipeline, control, ars, history, bus, research, signing, "
            "sync (or all)") in proc.stderr
    assert "Traceback" not in proc.stderr
    help_text = " ".join(cli("mcp", "--help").stdout.split())
    assert "--tools" in help_text and "pipeline, control, ars, history, bus, research, signing, sync, or all" in help_text
    assert subprocess.run(["git", "status", "--porcelain"], cwd=store, capture_output=True, text=True).stdout == ""


def test_every_flag_of_every_tool_reads_as_its_argument_name() -> None:
    """The table is the command table's parameters: each option a tool takes, named in a message,
    reads as the argument the tool takes it by; a flag no tool takes (git's) is left as it is."""
    from statedir.cli.registry import command_table
    from statedir.mcp.tools import CLI_ONLY, PERSON_ONLY, PROCESS_OWN, tools, wording_of

    served = tools(command_table())
    wording = wording_of(served)
    for name, tool in served.items():
        for param in tool.command.parameters:
            if param.name in ("store", "json") or param.kind != "option" or not param.flags[0].startswith("--") or \
                    (name, param.name) in PERSON_ONLY | PROCESS_OWN or param.name in CLI_ONLY:  # a person's or the server's own
                continue
            argument = "expect_head" if param.name == "expect" else param.name
            said = wording.say(f"pass {param.flags[0]} first", name)
            assert said == f"pass {argument} first", (name, said)
            assert argument in tool.input_schema["properties"], (name, argument)
    assert wording.say("finish it (or git merge --abort)") == "finish it (or git merge --abort)"
    # what the caller wrote, quoted back, is theirs: never translated
    said = wording.say("unknown stage '--next'; the topic \"use statedir new\" stays; pass --next", "confirm")
    assert said == "unknown stage '--next'; the topic \"use statedir new\" stays; pass next"
    said = wording.say("run `statedir bus set S F V --actor a`")
    assert said == "run `bus_set {session: S, field: F, value: V, actor: a}`"


def test_no_refusal_of_any_tool_speaks_the_command_line(store: Path) -> None:
    """Every tool called with nothing, with "nope" for each text argument, and so on a run that
    exists: whatever it refuses says so in the tools' words (values quoted back aside)."""
    from statedir.mcp.calls import Served

    api.StateDir(store).new("r1", topic="T")
    served = Served(store, mcp_host(command_table()))
    refused = 0
    for name, tool in served.tools.items():
        texts = [arg for arg, prop in tool.input_schema["properties"].items()
                 if prop.get("type") == "string" and arg != "expect_head"]
        nope = {arg: "nope" for arg in texts}
        for arguments in ({}, nope, {**nope, **({"run_id": "r1"} if "run_id" in texts else {})}):
            outcome = served.call(name, arguments)
            if outcome.is_error:
                refused += 1
                message = re.sub(r"'[^']*'", "", outcome.structured["error"]["message"])  # type: ignore[index]
                assert not _speaks_cli(message), (name, arguments, message)
    assert refused > 100

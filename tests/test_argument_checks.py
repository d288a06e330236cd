"""The Python API checks its arguments at its edge, as the CLI does: INVALID_VALUE, nothing changed. A
file argument's content is bounded as an argument is (over MCP and the CLI too), and a size refusal's
advice fits the argument."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import statedir
from statedir import api
from statedir.argument_checks import MAX_TEXT_BYTES
from statedir.errors import InvalidValue
from tests.support.mcp_session import AGENT_ROLES, ToolError, agent
from tests.support.util import cli, cli_json, snapshot, tracked

OBSERVER = "collaboration_depth_agent"

CALLS: list[tuple[str, Callable[[api.StateDir], Any]]] = [
    ("value", lambda sd: sd.set("r", "language", True, reason="x")),
    ("reason", lambda sd: sd.set("r", "language", "de", reason=3)),
    ("stage", lambda sd: sd.stage("r", 2.5, "in_progress")),  # an int id is taken; a float is not
    ("status", lambda sd: sd.stage("r", "1", None)),
    ("outputs", lambda sd: sd.stage("r", "1", "in_progress", outputs=["Bibliography", 2])),
    ("names", lambda sd: sd.material("r", {"paper_draft"})),
    ("files", lambda sd: sd.material("r", "paper_draft", files=[b"d.md"])),
    ("refs_total", lambda sd: sd.integrity("r", "2.5", "PASS", refs_total="3", refs_verified=3)),
    ("refs_verified", lambda sd: sd.integrity("r", "2.5", "PASS", refs_total=3, refs_verified=True)),
    ("run_id", lambda sd: sd.new(5, topic="t")),
    ("topic", lambda sd: sd.new("r2", topic=["t"])),
    ("topic", lambda sd: sd.new("r2", topic=42)),
    ("path", lambda sd: sd.get("r", None)),
    ("items_total", lambda sd: sd.revision("r", items_total=1.5)),
    ("family", lambda sd: sd.bind("r", None, not_applicable=True)),
    ("not_applicable", lambda sd: sd.bind("r", "compliance_report", not_applicable="yes")),
    ("artifact_root", lambda sd: sd.seal("r", 42)),
    ("response", lambda sd: sd.confirm("r", response=1)),
]


@pytest.mark.parametrize(("argument", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_a_wrong_type_is_invalid_value_and_changes_nothing(sd: api.StateDir, repo: Path, argument: str,
                                                           call: Callable[[api.StateDir], Any]) -> None:
    sd.new("r", topic="t")
    before = snapshot(repo)
    with pytest.raises(InvalidValue) as exc:
        call(sd)
    assert exc.value.details["argument"] == argument and argument in exc.value.message
    assert snapshot(repo) == before


def test_missing_arguments_are_invalid_value_too(sd: api.StateDir) -> None:
    sd.new("r", topic="t")
    with pytest.raises(InvalidValue, match="reason"):
        sd.set("r", "language", "de")  # type: ignore[call-arg]


def test_right_types_pass_the_edge(sd: api.StateDir, repo: Path) -> None:
    sd.new("r", topic="t")
    assert sd.set("r", "language", "de", reason="x")["commit"]
    assert api.init(str(repo / "state"))["created"] is False
    with pytest.raises(InvalidValue):
        api.init(7)  # type: ignore[arg-type]


# --- free text is capped where every entry point passes ---------------------------------------------
LONG = "r" * (MAX_TEXT_BYTES + 1)


def _api(repo: Path) -> dict[str, Any]:
    with pytest.raises(InvalidValue) as exc:
        statedir.open(repo / "state").set("r", "language", "de", reason=LONG)
    return exc.value.as_json()


def _cli(repo: Path) -> dict[str, Any]:
    code, out = cli_json("set", "r", "language", "de", "--reason", LONG, cwd=repo)
    assert code == 2
    return out  # type: ignore[return-value]


def _mcp(repo: Path) -> dict[str, Any]:
    from statedir.cli.registry import command_table
    from statedir.mcp.calls import Served
    from statedir.mcp.host import mcp_host

    served = Served(repo / "state", mcp_host(command_table()))
    outcome = served.call("set", {"run_id": "r", "field": "language", "value": "de", "reason": LONG})
    assert outcome.is_error and outcome.exit_code == 2
    return json.loads(outcome.text)  # type: ignore[no-any-return]


def _research(repo: Path) -> dict[str, Any]:
    code, out = cli_json("research", "--create-question", "--question", LONG, cwd=repo)
    assert code == 2
    return {"error": {"code": out["error"], "details": out["details"]}}  # type: ignore[index]


@pytest.mark.parametrize("entry", [_api, _cli, _mcp, _research], ids=["api", "cli", "mcp", "research"])
def test_free_text_past_the_cap_is_refused_on_every_entry_point(
        sd: api.StateDir, repo: Path, entry: Callable[[Path], dict[str, Any]]) -> None:
    sd.new("r", topic="t")
    before = snapshot(repo)
    error = entry(repo)["error"]
    assert error["code"] == "INVALID_VALUE"
    assert error["details"]["limit"] == MAX_TEXT_BYTES and error["details"]["argument"] in ("reason", "text")
    assert snapshot(repo) == before


def test_text_at_the_cap_is_taken(sd: api.StateDir) -> None:
    sd.new("r", topic="t")
    assert sd.set("r", "language", "de", reason="é" * (MAX_TEXT_BYTES // 2))["commit"]
    with pytest.raises(InvalidValue, match="more than the 65536"):
        sd.stage("r", "1", "in_progress", outputs=["ok", "é" * (MAX_TEXT_BYTES // 2 + 1)])


def test_the_names_the_api_lends_its_entry_points_are_the_layers_own() -> None:
    """statedir.api.places names the configuration file and the client trailer without loading
    the layers that define them (every command loads places): the same names."""
    from statedir.api import places
    from statedir.gitops.identity import CLIENT
    from statedir.store.layout import CONFIG

    assert (places.CONFIG, places.CLIENT) == (CONFIG, CLIENT)


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

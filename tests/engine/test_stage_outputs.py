"""A stage's outputs hold each name once where the template says so (`outputs_once`, academic-pipeline
3.22): a repeated `output` or `stage ... --output` is a no-op, no commit, the store byte-identical; a
call mixing new and recorded names records the new ones once. A run made on 3.21 keeps appending every
name, as its history was recorded, and `verify` stays clean over both. A template declaring
`free_outputs` records an undeclared name with a warning."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

import statedir
from statedir import api
from statedir.files import yaml
from tests.support.mcp_session import agent
from tests.support.runs import OLD_ACADEMIC
from tests.support.sim import Sim
from tests.support.util import cli, cli_json, snapshot

OWNER = "deep-research"  # stage 1's owner: `output` is the owner's


def test_a_stage_holds_each_output_once_on_the_rules_of_3_22_and_appends_on_3_21() -> None:
    sim = Sim()
    sim.do("stage", stage="1", status="in_progress", outputs=["rq_brief"])
    again = sim.do("output", actor=OWNER, stage="1", outputs=["rq_brief", "rq_brief"])
    assert again.noop and "already records rq_brief; nothing changed" in again.summary
    assert sim.do("stage", stage="1", status="in_progress", outputs=["rq_brief"]).noop
    mixed = sim.do("output", actor=OWNER, stage="1", outputs=["rq_brief", "bibliography", "bibliography"])
    assert mixed.summary == "stage 1 output: bibliography"
    assert sim.run.stages["1"]["outputs"] == ["rq_brief", "bibliography"]
    old = Sim(OLD_ACADEMIC)  # 3.21: every name given is appended, as its runs were recorded
    old.do("stage", stage="1", status="in_progress", outputs=["rq_brief"])
    assert not old.do("output", actor=OWNER, stage="1", outputs=["rq_brief"]).noop
    assert old.run.stages["1"]["outputs"] == ["rq_brief", "rq_brief"]
    linear = Sim("linear")  # declares no outputs_once either
    for _ in range(2):
        linear.do("stage", stage="plan", status="in_progress", outputs=["plan"])
    assert linear.run.stages["plan"]["outputs"] == ["plan", "plan"]


def outputs(repo: Path, run: str, stage: str) -> list[str]:
    return list(yaml.load((repo / "state" / "runs" / run / "stages" / f"{stage}.yaml").read_bytes())["outputs"])


def test_the_cli_records_a_name_once_on_3_22_and_a_3_21_run_replays_as_before(isolated: Path) -> None:
    from tests.support.util import FIXTURES

    repo = isolated / "legacy"  # p1 was made on academic-pipeline 3.21, its stage 2 in progress
    subprocess.run(["git", "clone", "-q", str(FIXTURES / "legacy-store.bundle"), str(repo)], check=True)
    for _ in range(2):
        code, out = cli_json("stage", "p1", "2", "in_progress", "--output", "paper_draft", cwd=repo)
        assert code == 0 and out["commit"], out  # type: ignore[index]
    assert outputs(repo, "p1", "2") == ["paper_draft", "paper_draft"]
    assert cli("new", "fresh", "--topic", "t", cwd=repo).returncode == 0  # a new run: 3.22
    assert cli("stage", "fresh", "1", "in_progress", "--output", "rq_brief", cwd=repo).returncode == 0
    saved = snapshot(repo)
    for args in (["stage", "fresh", "1", "in_progress", "--output", "rq_brief"],
                 ["output", "fresh", "1", "--output", "rq_brief", "--actor", OWNER]):
        code, out = cli_json(*args, cwd=repo)
        assert code == 0 and (out["changed"], out["commit"]) == (False, None), out  # type: ignore[index]
        assert snapshot(repo) == saved
    said = cli("output", "fresh", "1", "--output", "rq_brief", "--actor", OWNER, cwd=repo)
    assert said.returncode == 0 and "already records rq_brief; nothing changed" in said.stdout + said.stderr
    code, out = cli_json("output", "fresh", "1", "--output", "rq_brief", "--output", "bibliography",
                         "--actor", OWNER, cwd=repo)
    assert code == 0 and out["commit"], out  # type: ignore[index]
    assert outputs(repo, "fresh", "1") == ["rq_brief", "bibliography"]
    assert cli_json("verify", cwd=repo)[1]["clean"]  # type: ignore[index]


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

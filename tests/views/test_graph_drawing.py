"""`statedir graph`: the stage graph as Mermaid or DOT, MANDATORY checkpoints marked, a run's standing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from statedir import api
from statedir.engine import template
from statedir.views import graph_drawing
from tests.support.util import CLEAR_ITEMS, cli, cli_json


def test_mermaid_has_every_stage_edge_and_condition() -> None:
    t = template.load("academic-pipeline")
    text = graph_drawing.mermaid(t)
    assert text.startswith("flowchart TD\n")
    for stage_id in t.stage_ids:
        assert re.search(rf"^    s_{re.escape(stage_id).replace(chr(92) + '.', '_')}\[", text, re.M), stage_id
    assert len(re.findall(r" --> |-->\|", text)) == len(t.graph)
    assert 's_2_5[["2.5 INTEGRITY<br/>MANDATORY checkpoint"]]' in text
    assert 's_2["2 WRITE"]' in text  # no checkpoint mark where the template has none
    assert 's_3 -->|"decision in accept; skips 4, 3\', 4\'"| s_4_5' in text
    assert 's_completed(["completed"])' in text and "classDef" not in text


def test_a_run_shows_done_current_and_skipped(sd: api.StateDir) -> None:
    sd.new("r1", topic="T", entry_point="2.5")
    t, run, _ = sd.load("r1")
    text = graph_drawing.mermaid(t, run)
    assert "class s_2_5 current" in text
    assert "class s_1 skipped" in text and "class s_2 skipped" in text
    assert "class s_3 " not in text
    sd.material("r1", ["paper_draft"])
    sd.stage("r1", "2.5", "in_progress")
    sd.integrity("r1", "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    sd.checklist("r1", "2.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage("r1", "2.5", "completed")
    t, run, _ = sd.load("r1")
    assert "class s_2_5 done" in graph_drawing.mermaid(t, run)
    dot = graph_drawing.dot(t, run)
    assert '"2.5" [label="2.5 INTEGRITY\\nMANDATORY checkpoint", peripheries=2, style="filled"' in dot
    assert dot.count("{") == dot.count("}") == 1 and dot.rstrip().endswith("}")


def test_the_command(sd: api.StateDir, repo: Path) -> None:
    sd.new("r1", topic="T")
    proc = cli("graph", "r1")
    assert proc.returncode == 0 and "class s_1 current" in proc.stdout
    code, out = cli_json("graph", "--template", "linear", "--format", "dot")
    assert code == 0 and out["graph"].startswith('digraph "linear"') and out["run_id"] is None  # type: ignore[index]


@pytest.mark.parametrize("args, code", [(["r1", "--template", "linear"], "INVALID_VALUE"), ([], "INVALID_VALUE"),
                                        (["--template", "linear", "--format", "png"], "INVALID_VALUE"),
                                        (["nope"], "UNKNOWN_RUN"), (["--template", "nope"], "INVALID_VALUE")])
def test_bad_input_is_exit_2(sd: api.StateDir, args: list[str], code: str) -> None:
    sd.new("r1", topic="T")
    rc, out = cli_json("graph", *args)
    assert rc == 2 and out["error"]["code"] == code  # type: ignore[index]


def test_the_agents_page_shows_the_academic_pipeline_as_drawn() -> None:
    from tests.support.docs_text import page

    readme = page("agents")
    block = re.search(r"```mermaid\n(.*?)```", readme, re.S)
    assert block and block.group(1) == graph_drawing.mermaid(template.load("academic-pipeline"))

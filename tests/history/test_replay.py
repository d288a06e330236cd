"""Every kind of transition replays exactly: whole runs of both shipped templates, a store
template, reset boundaries, observer reports, redo, the seal, and a store deep in its repository."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import statedir
from statedir import api
from statedir.errors import IllegalTransition
from tests.support.history import drive, git
from tests.support.util import cli_json


@pytest.mark.slow  # a whole run, stage by stage through the CLI
def test_a_whole_academic_run_then_its_seal_verify_clean(sd: api.StateDir, repo: Path) -> None:
    (repo / "report.json").write_text("{}\n")
    drive(sd, repo / "draft.md")
    sd.bind("p1", "compliance_report", artifact="c0", role="compliance_report", group="SOURCE-GROUP-c0",
            path="report.json")
    sd.seal("p1", repo)
    result = sd.verify()
    # with the checklists of 2.5, 4.5, the re-review contract (5) and its traceability file (3.23)
    assert result["clean"] and result["checked"] == 44, result["findings"]


def test_observer_reports_loops_and_redo_verify_clean(sd: api.StateDir, repo: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    sd.new("p2", topic="t", language="de")
    sd.stage("p2", "1", "in_progress", mode="socratic")
    sd.output("p2", "1", ["Synthesis Report"], actor="deep-research")
    sd.material("p2", ["rq_brief"], origin_mode="socratic")
    sd.stage("p2", "1", "completed")
    sd.observe("p2", "1", "FULL", {"advisory_only": True, "zone": "green", "scores": {"depth": 3}},
               actor="collaboration_depth_agent")
    sd.confirm("p2", response="continue")
    with pytest.raises(IllegalTransition):  # a loop outside the stages that revise is no longer admitted
        sd.loop("p2")
    with monkeypatch.context() as old:  # ... but one a statedir from before that check made still replays
        old.setattr("statedir.engine.admission.admit", lambda *args: None)
        sd.loop("p2")
    sd.set("p2", "team.lead_author", "Ada", reason="she writes")
    sd.redo("p2", "1", reason="a sharper question")
    assert sd.verify()["clean"]


def test_reset_boundaries_and_resume_verify_clean(repo: Path) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state", reset_boundaries=True)
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")
    sd.stage("r1", "1", "completed")
    boundary = sd.show("r1")["history"]["reset_boundary"][0]
    sd.resume("r1", boundary["hash"])
    assert sd.verify() == {"clean": True, "checked": 5, "findings": []}


def test_a_run_on_a_store_template_verifies_clean(sd: api.StateDir, repo: Path) -> None:
    template = repo / "mine.yaml"
    template.write_text((Path(api.__file__).parent.parent.parent / "templates" / "linear.yaml").read_text()
                        .replace("name: linear", "name: mine"))
    sd.new("m1", topic="t", template=str(template))
    sd.stage("m1", "plan", "in_progress")
    sd.material("m1", ["plan"])
    sd.stage("m1", "plan", "done")
    sd.confirm("m1", response="continue")
    sd.new("m2", topic="u", template="mine")  # the stored template, by name
    result = sd.verify()
    assert result == {"clean": True, "checked": 7, "findings": []}, result
    edited = repo / "state/templates/mine.yaml"
    edited.write_text(edited.read_text().replace("title: Linear Pipeline", "title: Mine"))
    git(repo, "commit", "-qam", "retitle my template")  # its version kept: other content under a name and version
    assert [(f["kind"], f["file"]) for f in sd.verify()["findings"]] == [("illegal", "templates/mine.yaml")]


def test_a_store_deeper_in_the_repository(isolated: Path) -> None:
    subprocess.run(["git", "init", "-q", str(isolated)], check=True)
    store = isolated / "deep" / "er" / "state"
    assert cli_json("init", str(store), cwd=isolated)[0] == 0
    sd = statedir.open(store)
    seen = drive(sd, isolated / "draft.md", 6)
    result = sd.verify()
    assert result == {"clean": True, "checked": 7, "findings": []}, result
    assert sd.show("p1", at=seen[2][0]) == seen[2][1]
    assert sd.rollback("p1", to=seen[2][0], reason="back")["commit"]
    assert sd.verify()["clean"] and len(sd.log("p1")) == 7
    assert [v["commit"] for v in sd.versions("p1", "paper_draft")] == [seen[5][0]]

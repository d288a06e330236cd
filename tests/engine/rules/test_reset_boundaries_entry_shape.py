"""The reset-boundary log's entries in the upstream ARS reset_ledger_entry shape (issue 33, point 5): boundaries at
FULL checkpoints and at the MANDATORY checkpoints awaiting a decision, resumes that consume them,
every entry valid under the contract's shape; older runs' logs keep their version-1 shape."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from statedir import api
from statedir.files import schema
from tests.support.sim import Sim
from tests.support.util import clear_checklist, cli_json, snapshot, to_integrity

CONTRACT = json.loads((schema.data_dir("schemas") / "reset-ledger-entry.schema.json").read_text())
OLD_ACADEMIC = str(schema.data_dir("templates") / "academic-pipeline@3.21.yaml")


def boundary_log(sd: api.StateDir, run: str = "r1") -> list[dict[str, object]]:
    entries = sd.show(run)["history"]["reset_boundary"]
    for entry in entries:
        jsonschema.validate(entry, CONTRACT)
        assert None not in entry.values(), entry
    return entries  # type: ignore[no-any-return]


def test_boundaries_and_resumes_have_the_upstream_shape(repo: Path) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state", reset_boundaries=True)  # ARS_PASSPORT_RESET=1 at `new`
    sd.new("r1", topic="t")
    assert sd.get("r1", "settings.passport_reset") is True
    sd.stage("r1", "1", "in_progress")
    sd.material("r1", ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"])
    sd.stage("r1", "1", "completed", session="session-one")
    first = boundary_log(sd)[0]
    assert first == {"kind": "boundary", "hash": first["hash"], "stage": "1", "next": "2",
                     "generated_at": first["generated_at"], "session_marker": "session-one",
                     "version_label": "research_v1", "verification_status": "UNVERIFIED"}
    result = sd.resume("r1", str(first["hash"]), session="session-two")
    assert "UNVERIFIED" in result["warning"]  # resuming on an unverified passport warns
    resume = boundary_log(sd)[1]
    assert resume == {"kind": "resume", "consumes_hash": first["hash"], "chosen_branch": "2", "user_override": {},
                      "generated_at": resume["generated_at"], "session_marker": "session-two"}
    before = snapshot(repo)
    code, out = cli_json("resume", "r1", str(first["hash"]), cwd=repo)
    assert code == 1 and "already resumed" in out["error"]["message"], out  # type: ignore[index]
    assert snapshot(repo) == before
    assert sd.verify()["clean"]


def test_decision_checkpoints_are_boundaries_with_their_question(repo: Path) -> None:
    api.init(repo / "state")
    sd = api.StateDir(repo / "state", reset_boundaries=True)
    to_integrity(sd, "r1", "4.5")
    sd.integrity("r1", "4.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    clear_checklist(sd, "r1", "4.5")
    sd.stage("r1", "4.5", "completed")
    entries = boundary_log(sd)
    stages = [e["stage"] for e in entries if e["kind"] == "boundary"]
    assert "3" in stages and stages[-1] == "4.5"  # the MANDATORY decision checkpoints, not 2.5's
    assert "2.5" not in stages
    last = entries[-1]
    assert last["version_label"] == "paper_draft_v1" and last["verification_status"] == "VERIFIED"
    pending = last["pending_decision"]
    assert "citation style" in pending["question"]  # type: ignore[index]
    assert {"value": "apa7", "next_stage": "5"} in pending["options"]  # type: ignore[index]
    before = snapshot(repo)
    code, out = cli_json("resume", "r1", str(last["hash"]), cwd=repo)
    assert code == 2 and "--choice apa7" in out["error"]["message"], out  # type: ignore[index]
    assert snapshot(repo) == before
    code, out = cli_json("resume", "r1", str(last["hash"]), "--choice", "apa7", "--mode", "full", cwd=repo)
    assert code == 0, out
    assert "warning" not in out  # type: ignore[operator]
    resume = boundary_log(sd)[-1]
    assert resume["chosen_branch"] == "apa7" and resume["user_override"] == {"mode": "full"}
    assert sd.get("r1", "current_stage") == "5"
    assert sd.show("r1")["stages"]["5"]["answers"] == {"citation_style": "apa7"}  # the choice is the answer
    receipt = sd.show("r1")["pending_adjudication_activity_bindings"][4]["artifacts"][0]
    assert (repo / receipt["relative_path"]).is_file()  # its receipt bound by its path in the work tree
    assert sd.verify()["clean"]


def test_a_forged_entry_does_not_verify(repo: Path) -> None:
    import subprocess

    api.init(repo / "state")
    sd = api.StateDir(repo / "state", reset_boundaries=True)
    sd.new("r1", topic="t")
    sd.stage("r1", "1", "in_progress")
    sd.stage("r1", "1", "completed", session="mine")
    path = next((repo / "state" / "runs" / "r1" / "history" / "reset_boundary").glob("*.yaml"))
    path.write_text(path.read_text().replace("session_marker: mine", "session_marker: someone-else"))
    subprocess.run(["git", "commit", "-qam", "amend", "--amend", "--no-verify"], cwd=repo, check=True)
    assert not sd.verify()["clean"]


def test_older_templates_keep_the_version_1_shape() -> None:
    sim = Sim(OLD_ACADEMIC)
    sim.run.boundary_log = []
    sim.research()
    entry = sim.logs["reset_boundary"] or None
    assert entry is None  # off unless asked
    sim2 = Sim(OLD_ACADEMIC)
    sim2.run.boundary_log = []
    sim2.do("stage", stage="1", status="in_progress")
    sim2.do("stage", stage="1", status="completed", reset_boundaries=True)
    (old,) = sim2.logs["reset_boundary"]
    assert set(old) == {"kind", "hash", "at", "stage", "next", "pending_decision"}
    log_schema = json.loads((schema.data_dir("schemas") / "log-reset_boundary.schema.json").read_text())
    jsonschema.validate([old], log_schema)

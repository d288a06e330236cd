"""The re-review's traceability file (the R&R traceability sidecar of seed 002's #576), academic-
pipeline 3.23: registered as the material re_review_traceability with its file, bound by statedir
itself as the `traceability` artifact of the run's re_review_traceability adjudication row beside the
contract's manifest, criteria and claims, and a recommended (never required) input of stage 4.5
where stage 3' ran. A run made on 3.22 binds the check's report in its place, as it always did."""
from __future__ import annotations

from pathlib import Path

from statedir import api
from statedir.files import schema
from tests.support.runs import parts
from tests.support.sim import Sim
from tests.support.util import cli, cli_json, to_integrity

ROLES = ["input_manifest", "precommitment", "verdict_record", "traceability"]


def row(sd: api.StateDir, run: str = "r1") -> dict[str, object]:
    rows = sd.get(run, "pending_adjudication_activity_bindings")
    return next(r for r in rows if r["source_family"] == "re_review_traceability")  # type: ignore[no-any-return]


def test_the_traceability_file_is_bound_to_its_row_and_recommended_at_4_5(at3p: api.StateDir, repo: Path) -> None:
    untouched = row(at3p)
    parts(at3p)
    assert cli("contract", "r1", "3p", "check", "--exit-code", "0", "--file", "report.json", cwd=repo).returncode == 0
    assert row(at3p) == untouched  # three roles of four: not bound yet, and never the check's report
    assert cli("stage", "r1", "3p", "completed", "--decision", "minor_revision", cwd=repo).returncode == 0
    code, prereq = cli_json("prereq", "r1", "4.5", cwd=repo)
    assert prereq["prerequisites_met"] and prereq["missing_recommended"] == ["re_review_traceability"], prereq  # type: ignore[index]
    code, moves = cli_json("next", "r1", cwd=repo)
    [confirm] = [m for m in moves["moves"] if m["command"] == "confirm"]  # type: ignore[index]
    assert "missing: re_review_traceability" in confirm["note"], confirm
    assert "missing: re_review_traceability" in cli("next", "r1", cwd=repo).stdout
    (repo / "trace.json").write_text('{"previously_missed": [], "indeterminate": []}\n')
    code, out = cli_json("material", "r1", "re_review_traceability", "--file", "trace.json", "--allow-untracked",
                         cwd=repo)
    assert code == 0 and out["version_label"] == "traceability_v1", out  # type: ignore[index]
    bound = row(at3p)
    assert bound["capture_state"] == "captured" and bound["reason_code"] is None
    assert [a["artifact_role"] for a in bound["artifacts"]] == ROLES  # type: ignore[union-attr]
    assert [a["relative_path"] for a in bound["artifacts"]] == ["manifest.md", "criteria.md", "claims.md",  # type: ignore[union-attr]
                                                               "trace.json"]
    code, prereq = cli_json("prereq", "r1", "4.5", cwd=repo)
    assert prereq["missing_recommended"] == [] and prereq["warning"] is None, prereq  # type: ignore[index]
    code, moves = cli_json("next", "r1", cwd=repo)
    assert all("note" not in m for m in moves["moves"] if m["command"] == "confirm")  # type: ignore[index]
    code, out = cli_json("confirm", "r1", "--response", "continue", cwd=repo)
    assert code == 0 and out["next"] == "4.5" and "warning" not in out, out  # type: ignore[index,operator]
    assert cli("verify", cwd=repo).returncode == 0


def test_registered_before_the_check_it_is_bound_at_the_check(at3p: api.StateDir, repo: Path) -> None:
    (repo / "trace.json").write_text("{}\n")
    assert cli("material", "r1", "re_review_traceability", "--file", "trace.json", cwd=repo).returncode == 0
    parts(at3p)
    assert row(at3p)["capture_state"] != "captured"
    assert cli("contract", "r1", "3p", "check", "--exit-code", "0", "--file", "report.json", cwd=repo).returncode == 0
    assert [a["relative_path"] for a in row(at3p)["artifacts"]][-1] == "trace.json"  # type: ignore[union-attr]


def test_without_a_re_review_4_5_recommends_nothing(sd: api.StateDir) -> None:
    to_integrity(sd, "a1", "4.5")  # accepted at 3: stage 3' skipped
    assert sd.prereq("a1", "4.5")["missing_recommended"] == []


def through_the_check(sim: Sim) -> None:
    sim.to_re_review()
    sim.do("material", names=["re_review_report"])
    sim.contract_holds()


def test_3_22_binds_the_checks_report_as_it_always_did() -> None:
    old = Sim(str(schema.data_dir("templates") / "academic-pipeline@3.22.yaml"))
    through_the_check(old)
    bound = next(r for r in old.state["pending_adjudication_activity_bindings"]
                 if r["source_family"] == "re_review_traceability")
    assert [a["relative_path"] for a in bound["artifacts"]] == ["manifest.md", "criteria.md", "claims.md", "check.json"]
    assert "re_review_traceability" not in old.t.materials
    new = Sim()
    through_the_check(new)
    assert next(r for r in new.state["pending_adjudication_activity_bindings"]
                if r["source_family"] == "re_review_traceability")["capture_state"] != "captured"
    new.do("material", names=["re_review_traceability"], files=[{"path": "trace.json", "content_hash": "e" * 64}])
    bound = next(r for r in new.state["pending_adjudication_activity_bindings"]
                 if r["source_family"] == "re_review_traceability")
    assert [a["relative_path"] for a in bound["artifacts"]] == ["manifest.md", "criteria.md", "claims.md", "trace.json"]

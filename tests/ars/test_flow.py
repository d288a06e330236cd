"""bind and seal on real stores: the five rows, every family and shape, sealing, the export."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.errors import StatedirError
from tests.support import runs
from tests.support.ars import FAMILIES, RE_REVIEW, check_sealed, finish
from tests.support.util import CLEAR_ITEMS, cli, cli_json, contract_holds, copy_of, snapshot

RUN = "run-42"
# Every family and every group shape: two author groups (stage 3, then 3'), a compliance group
# with its override receipt and a report-only one, the re-review quartet, both receipt logs.
BINDINGS = [
    ("revision_author_adjudication", "a3in", "author_adjudication_input", "SOURCE-GROUP-a3", "3"),
    ("revision_author_adjudication", "a3", "author_adjudication", "SOURCE-GROUP-a3", "3"),
    ("revision_author_adjudication", "a3pin", "author_adjudication_input", "SOURCE-GROUP-a3p", "3'"),
    ("revision_author_adjudication", "a3p", "author_adjudication", "SOURCE-GROUP-a3p", "3p"),
    ("compliance_report", "c1", "compliance_report", "SOURCE-GROUP-c1", None),
    ("compliance_report", "c1a", "compliance_override_action_receipt", "SOURCE-GROUP-c1", None),
    ("compliance_report", "c2", "compliance_report", "SOURCE-GROUP-c2", None),
    ("re_review_traceability", "rr1", "input_manifest", "SOURCE-GROUP-rr", None),
    ("re_review_traceability", "rr2", "precommitment", "SOURCE-GROUP-rr", None),
    ("re_review_traceability", "rr3", "verdict_record", "SOURCE-GROUP-rr", None),
    ("re_review_traceability", "rr4", "traceability", "SOURCE-GROUP-rr", None),
    ("explicit_user_request", "x1", "explicit_user_request_log", "SOURCE-GROUP-x", None),
    ("mandatory_checkpoint_response", "m1", "mandatory_checkpoint_response_log", "SOURCE-GROUP-m", None),
]
STATEDIR_BOUND = ("re_review_traceability", "mandatory_checkpoint_response")


def strict_json(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise AssertionError(f"not strict JSON: {token}")
    return json.loads(text, parse_float=refuse, parse_constant=refuse)


def bind_all(sd: api.StateDir, root: Path, bindings: list[tuple[str, str, str, str, str | None]]) -> None:
    for family, artifact, role, group, stage in bindings:
        path = root / "src" / f"{artifact}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"artifact": artifact, "role": role}) + "\n")
        sd.bind(RUN, family, artifact=artifact, role=role, group=group, group_stage=stage,
                path=f"src/{artifact}.json")


@pytest.fixture
def at_re_review(sd: api.StateDir, repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    """Run RUN with stages 1 to 4 done and stage 3' in progress (`runs.at_re_review`): made once per
    process and copied."""
    return copy_of("ars-to-re-review", lambda made: runs.at_re_review(made, RUN, **RE_REVIEW), repo,
                   tmp_path_factory)[0]


@pytest.fixture
def sealed(at_re_review: api.StateDir, repo: Path) -> tuple[api.StateDir, Path]:
    sd, root = at_re_review, repo / "artifacts"
    bind_all(sd, root, BINDINGS[:2])  # stage 3's author group, bound while the run goes on
    finish(sd, RUN)
    # after the terminal state, still before the seal (the re-review quartet statedir bound itself at
    # the contract's check, the MANDATORY checkpoints' receipt log at their answers: a second group
    # would be refused)
    bind_all(sd, root, [b for b in BINDINGS[2:] if b[0] not in STATEDIR_BOUND])
    import shutil  # ... their files named by their path in the repository, which seal reads below its root

    shutil.copytree(sd.store.files_worktree / "rr", root / "rr")
    shutil.copytree(sd.store.files_worktree / "state" / "runs", root / "state" / "runs")
    result = sd.seal(RUN, root)
    assert result["changed"] is True and len(result["commit"]) == 40
    return sd, root


def test_a_new_run_starts_with_five_not_applicable_rows(sd: api.StateDir) -> None:
    sd.new(RUN, topic="t")
    rows = sd.get(RUN, "pending_adjudication_activity_bindings")
    assert [r["source_family"] for r in rows] == FAMILIES
    assert all(r == {"source_family": r["source_family"], "capture_state": "not_applicable",
                     "reason_code": "not_applicable_for_run", "artifacts": []} for r in rows)


@pytest.mark.slow  # a whole run, stage by stage through the CLI
def test_a_full_run_sealed_and_exported_passes_the_upstream_rules(sealed: tuple[api.StateDir, Path],
                                                                   repo: Path) -> None:
    sd, root = sealed
    code, doc = cli_json("show", RUN, "--format", "ars", cwd=repo)
    assert code == 0
    raw = cli("show", RUN, "--format", "ars", cwd=repo).stdout
    assert strict_json(raw) == doc
    check_sealed(doc, root)
    rows = doc["adjudication_activity_sources"]
    assert [r["capture_state"] for r in rows] == ["captured"] * 5
    assert [a["artifact_group_stage"] for a in rows[0]["artifacts"]] == ["pipeline_stage_3"] * 2 + [
        "pipeline_stage_3_prime"] * 2
    assert doc["pipeline_state"] == "completed" and doc["current_stage"] == "6"
    pending = doc["pending_adjudication_activity_bindings"]
    assert all("sha256" not in a for r in pending for a in r["artifacts"])  # callers never pass hashes


@pytest.mark.slow  # a whole run, then sealed twice
def test_sealing_leaves_the_terminal_state_and_is_idempotent(sealed: tuple[api.StateDir, Path], repo: Path) -> None:
    sd, root = sealed
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    show = subprocess.run(["git", "show", "--stat", "--format=%B", "HEAD"], cwd=repo, capture_output=True,
                          text=True).stdout
    assert "Statedir-Action: seal" in show and "state/runs/run-42/state.yaml" in show
    assert "stages/" not in show  # no stage file touched
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(root), cwd=repo)
    assert code == 0 and out["changed"] is False and out["commit"] is None
    assert snapshot(repo) == before
    # different bytes under the root: different rows, refused, nothing changes
    (root / "src" / "x1.json").write_text("{}\n")
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(root), cwd=repo)
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION"
    assert snapshot(repo) == before
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True).stdout.strip() == head
    with pytest.raises(StatedirError) as exc:
        sd.bind(RUN, "explicit_user_request", not_applicable=True)
    assert exc.value.code == "ILLEGAL_TRANSITION" and "sealed" in exc.value.message


def test_seal_before_the_terminal_state_is_refused(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(repo), cwd=repo)
    assert code == 1 and out["error"]["code"] == "ILLEGAL_TRANSITION"
    assert snapshot(repo) == before


def test_an_aborted_run_seals_unavailable_and_not_applicable_rows(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    sd.pipeline(RUN, "aborted", reason="ended to test sealing")
    code, out = cli_json("bind", RUN, "compliance_report", "--unavailable", "source_unreadable", cwd=repo)
    assert code == 0 and out["capture_state"] == "unavailable" and len(out["commit"]) == 40
    code, out = cli_json("seal", RUN, "--artifact-root", str(repo), cwd=repo)
    assert code == 0
    code, doc = cli_json("show", RUN, "--format", "ars", cwd=repo)
    check_sealed(doc, repo)
    assert doc["adjudication_activity_sources"][1] == {
        "source_family": "compliance_report", "capture_state": "unavailable", "reason_code": "source_unreadable",
        "artifacts": []}


def test_declining_stage_6_makes_it_the_current_stage(at_re_review: api.StateDir, repo: Path) -> None:
    sd = at_re_review
    sd.material(RUN, ["re_review_report"])
    contract_holds(sd, RUN)
    sd.stage(RUN, "3p", "completed", decision="accept")
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "4.5", "PASS", refs_total=1, refs_verified=1, issues_found=0, issues_fixed=0,
                 actor="integrity_verification")
    sd.checklist(RUN, "4.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage(RUN, "4.5", "completed")
    sd.confirm(RUN, response="continue", format="apa7")
    sd.stage(RUN, "5", "completed")
    sd.confirm(RUN, next="completed", response="continue")
    sd.seal(RUN, repo)
    code, doc = cli_json("show", RUN, "--format", "ars", cwd=repo)
    assert doc["current_stage"] == "6" and doc["stages"]["6"]["status"] == "skipped"
    check_sealed(doc, repo)


def test_seal_refuses_an_incomplete_group_or_an_unfinished_stage(sd: api.StateDir, repo: Path) -> None:
    root = repo / "artifacts"
    sd.new(RUN, topic="t")
    bind_all(sd, root, [BINDINGS[7], BINDINGS[8]])  # half a re-review quartet
    sd.pipeline(RUN, "aborted", reason="ended to test sealing")
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(root), cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE"
    assert "incomplete" in out["error"]["message"] and "verdict_record" in out["error"]["message"]
    assert snapshot(repo) == before


def test_seal_refuses_an_author_group_of_a_stage_never_completed(sd: api.StateDir, repo: Path) -> None:
    root = repo / "artifacts"
    sd.new(RUN, topic="t")
    bind_all(sd, root, BINDINGS[:2])
    sd.pipeline(RUN, "aborted", reason="ended to test sealing")
    code, out = cli_json("seal", RUN, "--artifact-root", str(root), cwd=repo)
    assert code == 2 and "did not complete" in out["error"]["message"]


@pytest.mark.parametrize(("args", "words"), [
    (["nonsense", "--not-applicable"], "unknown source family"),
    (["compliance_report", "--unavailable", "tired"], "unknown reason"),
    (["compliance_report", "--artifact", "c", "--role", "traceability", "--group", "SOURCE-GROUP-c",
      "--path", "c.json"], "role 'traceability'"),
    (["compliance_report", "--artifact", "c", "--role", "compliance_report", "--group", "group-c",
      "--path", "c.json"], "group id"),
    (["compliance_report", "--artifact", "c", "--role", "compliance_report", "--group", "SOURCE-GROUP-c",
      "--group-stage", "3", "--path", "c.json"], "no --group-stage"),
    (["revision_author_adjudication", "--artifact", "a", "--role", "author_adjudication_input",
      "--group", "SOURCE-GROUP-a", "--path", "a.json"], "--group-stage"),
    (["revision_author_adjudication", "--artifact", "a", "--role", "author_adjudication_input",
      "--group", "SOURCE-GROUP-a", "--group-stage", "4", "--path", "a.json"], "stage 3 or 3'"),
    (["compliance_report", "--artifact", "c", "--role", "compliance_report", "--group", "SOURCE-GROUP-c",
      "--path", "../c.json"], "'..'"),
    (["compliance_report", "--artifact", "c", "--role", "compliance_report", "--group", "SOURCE-GROUP-c",
      "--path", "/etc/passwd"], "relative"),
    (["compliance_report", "--artifact", "bad id", "--role", "compliance_report", "--group", "SOURCE-GROUP-c",
      "--path", "c.json"], "artifact id"),
    (["compliance_report", "--artifact", "c", "--role", "compliance_report"], "--group, --path"),
    (["compliance_report", "--not-applicable", "--unavailable", "source_invalid"], "exactly one"),
])
def test_bind_refuses_what_the_contract_does_not_allow(sd: api.StateDir, repo: Path, args: list[str],
                                                      words: str) -> None:
    sd.new(RUN, topic="t")
    before = snapshot(repo)
    code, out = cli_json("bind", RUN, *args, cwd=repo)
    assert code == 2, out
    assert out["error"]["code"] == "INVALID_VALUE" and words in out["error"]["message"], out
    assert snapshot(repo) == before


def test_roles_out_of_order_and_duplicates_are_refused(sd: api.StateDir, repo: Path) -> None:
    root = repo / "artifacts"
    sd.new(RUN, topic="t")
    bind_all(sd, root, [BINDINGS[1]])  # the output before its input
    with pytest.raises(StatedirError, match="in the order author_adjudication_input, author_adjudication"):
        bind_all(sd, root, [BINDINGS[0]])
    with pytest.raises(StatedirError, match="already bound"):
        bind_all(sd, root, [BINDINGS[1]])
    bind_all(sd, root, [BINDINGS[4], BINDINGS[6]])
    with pytest.raises(StatedirError, match="split"):  # back to the first compliance group
        bind_all(sd, root, [BINDINGS[5]])


def test_a_failed_bind_leaves_the_transition_it_follows(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    sd.stage(RUN, "1", "in_progress")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout
    code, out = cli_json("bind", RUN, "compliance_report", "--unavailable", "nope", cwd=repo)
    assert code == 2
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout == head
    assert sd.get(RUN, "stages.1.status") == "in_progress"


def test_marking_a_captured_row_unavailable_drops_its_artifacts(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    bind_all(sd, repo / "artifacts", [BINDINGS[11]])
    result = sd.bind(RUN, "explicit_user_request", unavailable="source_invalid")
    assert result["dropped"] == 1
    row = sd.get(RUN, "pending_adjudication_activity_bindings")[3]
    assert row == {"source_family": "explicit_user_request", "capture_state": "unavailable",
                   "reason_code": "source_invalid", "artifacts": []}


def test_a_run_made_before_the_contract_still_reads_and_binds(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    state = repo / "state" / "runs" / RUN / "state.yaml"
    text = state.read_text()
    assert "pending_adjudication_activity_bindings:" not in text  # five rows not applicable: none written
    start = end = text.index("created_at:")
    legacy = "".join(f"  - source_family: {f}\n    artifacts: []\n    reason: null\n" for f in
                     ["author_adjudication", "compliance", "re_review", "explicit_request", "mandatory_checkpoint"])
    state.write_text(text[:start] + "pending_adjudication_activity_bindings:\n" + legacy + text[end:])
    subprocess.run(["git", "commit", "-qam", "an older statedir's run"], cwd=repo, check=True)
    assert cli("validate", cwd=repo).returncode == 0
    sd.bind(RUN, "compliance_report", unavailable="source_not_provided")
    rows = sd.get(RUN, "pending_adjudication_activity_bindings")
    assert [r["source_family"] for r in rows] == FAMILIES and rows[1]["capture_state"] == "unavailable"


def test_the_export_is_strict_json_even_with_fractional_observer_scores(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    sd.stage(RUN, "1", "in_progress")
    sd.stage(RUN, "1", "completed")
    sd.observe(RUN, "1", "FULL", {"zone": "Zone 2", "advisory_only": True,
                                  "scores": {"delegation_intensity": 4.5, "cognitive_vigilance": 3.0}},
               actor="collaboration_depth_agent")
    doc = strict_json(cli("show", RUN, "--format", "ars", cwd=repo).stdout)
    assert doc["collaboration_depth_history"][0]["scores"] == {"delegation_intensity": "4.5",
                                                               "cognitive_vigilance": 3}

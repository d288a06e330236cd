"""The AI research failure-mode checklist of academic-pipeline 3.22 (seed 002's IRON RULE v3.2):
`checklist` and `acknowledge`, the block and warn rules, the carry-over from 2.5 to 4.5, the
override ladder shared with `resolve`, the audit; on plain data, through the real CLI, by verify."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from statedir import api, errors
from tests.support.refusals import cli_words
from tests.support.sim import INTEGRITY, ORCH, Sim
from tests.support.util import CLEAR_ITEMS, cli, cli_json, copy_of, snapshot, to_integrity

RUN = "c1"
LONG = ("The user re-ran the analysis by hand, compared every reported number with the raw output and "
        "accepts the result as it stands.")


def refused(sim: Sim, code: str, action: str, actor: str = ORCH, reason: str | None = None, **args: object) -> str:
    with pytest.raises(errors.StatedirError) as info:
        sim.do(action, actor=actor, reason=reason, **args)
    assert info.value.code == code, info.value.message
    return info.value.message


def at_2_5(pass_first: bool = True) -> Sim:
    sim = Sim()
    sim.research()
    sim.write()
    if pass_first:
        sim.do("integrity", actor=INTEGRITY, stage="2.5", verdict="PASS", refs_total=10, refs_verified=10)
    return sim


def at_4_5(sim: Sim) -> None:
    if sim.run.stages["2.5"]["failure_modes"] is None:
        sim.checklist("2.5")
    sim.do("stage", stage="2.5", status="completed")
    sim.do("confirm", response="continue")
    sim.review("accept")
    sim.do("confirm", response="continue")
    sim.do("integrity", actor=INTEGRITY, stage="4.5", verdict="PASS", refs_total=10, refs_verified=10)


def ack(sim: Sim, mode: str, answer: str, reason: str | None = None, stage: str = "2.5") -> object:
    return sim.do("acknowledge_mode", actor="user", reason=reason, stage=stage, mode=mode, answer=answer)


@pytest.mark.parametrize("mode", [str(m) for m in range(1, 8)])
def test_any_suspected_mode_blocks_the_stage(mode: str) -> None:
    sim = at_2_5()
    change = sim.checklist("2.5", **{f"m{mode}": "SUSPECTED"})
    assert change.result["blocking"] == [mode] and change.result["blocks"]
    message = refused(sim, "FAILURE_MODE_BLOCK", "stage", stage="2.5", status="completed")
    assert f"mode {mode} (" in message and "statedir acknowledge" in message


@pytest.mark.parametrize("mode,blocks", [("1", True), ("3", True), ("5", True), ("6", True),
                                         ("2", False), ("4", False), ("7", False)])
def test_insufficient_evidence_blocks_for_1_3_5_6_and_warns_for_2_4_7(mode: str, blocks: bool) -> None:
    sim = at_2_5()
    change = sim.checklist("2.5", **{f"m{mode}": "INSUFFICIENT_EVIDENCE"})
    assert change.result["blocking"] == ([mode] if blocks else [])
    assert change.result["warned"] == ([] if blocks else [mode])
    if blocks:
        refused(sim, "FAILURE_MODE_BLOCK", "stage", stage="2.5", status="completed")
    else:
        assert "checked again at 4.5" in change.result["warning"]
        sim.do("stage", stage="2.5", status="completed")


def test_no_checklist_no_completion_and_a_pass_alone_never_completes() -> None:
    sim = at_2_5()
    message = refused(sim, "FAILURE_MODE_BLOCK", "stage", stage="2.5", status="completed")
    assert "no failure-mode checklist" in message
    sim.checklist("2.5")
    sim.do("stage", stage="2.5", status="completed")


def test_confirm_sends_the_run_back_to_stage_two_resetting_what_followed() -> None:
    sim = at_2_5()
    at_4_5(sim)
    sim.checklist("4.5", m3="SUSPECTED")
    change = ack(sim, "3", "confirm", stage="4.5")
    assert sim.state["current_stage"] == "2" and sim.status("2") == "in_progress"
    assert all(sim.status(s) == "pending" for s in ("2.5", "3", "4", "3p", "4p", "4.5"))
    assert sim.logs["failure_modes"][-1]["sent_to"] == "2" and "back to stage 2" in change.summary


def test_override_clears_the_mode_for_this_stage_with_a_reason() -> None:
    sim = at_2_5()
    sim.checklist("2.5", m1="SUSPECTED", m6="INSUFFICIENT_EVIDENCE")
    assert "needs a reason" in refused(sim, "INVALID_VALUE", "acknowledge_mode", actor="user", stage="2.5",
                                       mode="1", answer="override")
    ack(sim, "1", "override", "checked every citation against the library")
    assert "mode 6 (" in refused(sim, "FAILURE_MODE_BLOCK", "stage", stage="2.5", status="completed")
    ack(sim, "6", "override", "the method section was written from the lab notebook")
    sim.do("stage", stage="2.5", status="completed")
    assert sim.run.stages["2.5"]["failure_modes"]["overridden"] == {
        "1": "checked every citation against the library", "6": "the method section was written from the lab notebook"}


def test_revise_keeps_the_block_until_a_new_checklist_which_comes_only_after_the_users_answer() -> None:
    sim = at_2_5()
    sim.checklist("2.5", m3="SUSPECTED", m5="SUSPECTED")
    assert "no new checklist" in refused(sim, "FAILURE_MODE_BLOCK", "checklist", actor=INTEGRITY, stage="2.5",
                                         items=CLEAR_ITEMS, evidence=[])
    ack(sim, "3", "revise")
    refused(sim, "FAILURE_MODE_BLOCK", "stage", stage="2.5", status="completed")  # revise keeps it blocking
    refused(sim, "FAILURE_MODE_BLOCK", "checklist", actor=INTEGRITY, stage="2.5", items=CLEAR_ITEMS, evidence=[])
    ack(sim, "5", "revise")
    sim.checklist("2.5")  # every blocking mode answered: the revised work is checked again
    sim.do("stage", stage="2.5", status="completed")


def test_a_mode_suspected_at_2_5_must_end_clear_or_overridden_at_4_5() -> None:
    sim = at_2_5()
    sim.checklist("2.5", m2="SUSPECTED")
    ack(sim, "2", "override", "a known bug, fixed in the revision")
    at_4_5(sim)
    change = sim.checklist("4.5", m2="INSUFFICIENT_EVIDENCE")  # a warning elsewhere: here it blocks
    assert change.result["blocking"] == ["2"]
    refused(sim, "FAILURE_MODE_BLOCK", "stage", stage="4.5", status="completed")
    ack(sim, "2", "revise", stage="4.5")
    sim.checklist("4.5")
    sim.do("stage", stage="4.5", status="completed")


def test_the_override_ladder_counts_resolutions_and_acknowledgements_together() -> None:
    sim = Sim()
    sim.research()
    sim.write()
    sim.fail_integrity(3)
    sim.do("resolve", actor="user", stage="2.5", decision="handle_manually")  # round 1
    sim.do("integrity", actor=INTEGRITY, stage="2.5", verdict="PASS", refs_total=10, refs_verified=10)
    sim.checklist("2.5", m1="SUSPECTED", m3="SUSPECTED")
    assert ack(sim, "1", "override", "x").result["override_round"] == 2  # type: ignore[attr-defined]
    message = refused(sim, "INVALID_VALUE", "acknowledge_mode", actor="user", reason="too short", stage="2.5",
                      mode="3", answer="override")
    assert "round 3" in message and "100 characters" in message
    ack(sim, "3", "override", LONG)
    assert sim.state["override_rounds"]["2.5"] == 3


def test_acknowledging_a_mode_that_does_not_block_is_refused() -> None:
    sim = at_2_5()
    sim.checklist("2.5", m3="SUSPECTED", m2="INSUFFICIENT_EVIDENCE")
    message = refused(sim, "ILLEGAL_TRANSITION", "acknowledge_mode", actor="user", stage="2.5", mode="2",
                      answer="override", reason="r")
    assert "does not block" in message and "are 3" in message
    assert "unknown answer" in refused(sim, "INVALID_VALUE", "acknowledge_mode", actor="user", stage="2.5",
                                       mode="3", answer="ignore")


def test_the_old_template_has_no_checklist() -> None:
    from tests.support.runs import OLD_ACADEMIC

    sim = Sim(OLD_ACADEMIC)
    sim.research()
    sim.write()
    sim.do("integrity", actor=INTEGRITY, stage="2.5", verdict="PASS", refs_total=10, refs_verified=10)
    refused(sim, "PERMISSION_DENIED", "checklist", actor=INTEGRITY, stage="2.5", items=CLEAR_ITEMS, evidence=[])
    sim.do("stage", stage="2.5", status="completed")  # the 3.21 rules: no checklist to wait for


# --- through the CLI ----------------------------------------------------------------------------
def _blocked(sd: api.StateDir) -> None:
    to_integrity(sd, RUN)
    sd.integrity(RUN, "2.5", "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
    sd.checklist(RUN, "2.5", [*CLEAR_ITEMS[:2], "3=SUSPECTED", *CLEAR_ITEMS[3:]], evidence=["3=table 2 is invented"],
                 actor=INTEGRITY)


@pytest.fixture
def blocked(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    """Run c1 at 2.5 with a PASS and a checklist blocking on mode 3: made once per process and copied."""
    return copy_of("checklist-blocked", _blocked, repo, tmp_path_factory)[0]


def test_bad_input_is_refused_naming_what_is_allowed_and_changes_nothing(repo: Path, blocked: api.StateDir) -> None:
    sd, user = blocked, {"actor": "user"}
    cases = [
        (lambda: sd.checklist(RUN, "2.5", ["1=CLEAR"], actor=INTEGRITY), "INVALID_VALUE", "missing"),
        (lambda: sd.checklist(RUN, "2.5", [*CLEAR_ITEMS, "8=CLEAR"], actor=INTEGRITY), "INVALID_VALUE",
         "the modes are"),
        (lambda: sd.checklist(RUN, "2.5", ["1=MAYBE", *CLEAR_ITEMS[1:]], actor=INTEGRITY), "INVALID_VALUE",
         "CLEAR, SUSPECTED"),
        (lambda: sd.checklist(RUN, "2.5", ["1"], actor=INTEGRITY), "INVALID_VALUE", "MODE=VALUE"),
        (lambda: sd.checklist(RUN, "3", CLEAR_ITEMS, actor=INTEGRITY), "INVALID_VALUE", "taken at 2.5, 4.5"),
        (lambda: sd.checklist(RUN, "2.5", CLEAR_ITEMS), "PERMISSION_DENIED", "integrity_verification"),
        (lambda: sd.checklist(RUN, "2.5", CLEAR_ITEMS, actor=INTEGRITY), "FAILURE_MODE_BLOCK", "acknowledge"),
        (lambda: sd.acknowledge_mode(RUN, "2.5", "3", "skip", **user), "INVALID_VALUE", "confirm, override, revise"),
        (lambda: sd.acknowledge_mode(RUN, "2.5", "9", "revise", **user), "INVALID_VALUE", "the modes are"),
        (lambda: sd.acknowledge_mode(RUN, "2.5", "1", "override", reason="r", **user), "ILLEGAL_TRANSITION",
         "does not block"),
        (lambda: sd.acknowledge_mode(RUN, "2.5", "3", "override", **user), "INVALID_VALUE", "needs a reason"),
        (lambda: sd.acknowledge_mode(RUN, "2.5", "3", "revise", actor=INTEGRITY), "PERMISSION_DENIED", "relay"),
        (lambda: sd.stage(RUN, "2.5", "completed"), "FAILURE_MODE_BLOCK", "mode 3 (hallucinated result)"),
    ]
    before = snapshot(repo)
    for act, code, said in cases:  # each refused with its code, naming what is allowed
        with cli_words(), pytest.raises(errors.StatedirError) as info:
            act()
        assert info.value.code == code and said in info.value.message, (code, said, info.value.message)
    assert snapshot(repo) == before


def test_nothing_but_the_users_answer_lifts_the_block(repo: Path, blocked: api.StateDir) -> None:
    """No run setting, no edited template copy in the store, no --actor of any role completes the
    blocked stage; the user's recorded override does."""
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    # a run's settings are fixed at `new` (none of them names the checklist), and none can be set now
    rc, out = cli_json("set", RUN, "settings.reset_boundaries", "true", "--reason", "a setting", cwd=repo)
    assert rc != 0 and out["error"]["code"] in ("IMMUTABLE_FIELD", "INVALID_VALUE")  # type: ignore[index]
    rc, out = cli_json("set", RUN, "settings.failure_modes", "false", "--reason", "off", cwd=repo)
    assert rc != 0 and out["error"]["code"] in ("IMMUTABLE_FIELD", "INVALID_VALUE")  # type: ignore[index]
    from statedir.engine import template as template_mod

    shipped = template_mod.shipped()["academic-pipeline"].read_text()
    head, _, rest = shipped.partition("# --- failure-mode checklist")
    edited = head + rest.partition("# --- end of the failure-mode checklist")[2].partition("\n")[2]
    edited = edited.replace("modes: ['1', '3', '5', '6']", "modes: []")
    (repo / "state" / "templates").mkdir(exist_ok=True)
    (repo / "state" / "templates" / "academic-pipeline.yaml").write_text(edited)
    git("add", "-A")
    git("commit", "-q", "-m", "the checklist taken out of the store's template copy")
    roles = ["pipeline_orchestrator", "integrity_verification", "user", "collaboration_depth_agent", "deep-research",
             "academic-paper", "academic-paper-reviewer", "academic-pipeline", "state_tracker"]
    for role in roles:
        rc, out = cli_json("stage", RUN, "2.5", "completed", "--actor", role, cwd=repo,
                           env={"STATEDIR_ACTOR": role})
        assert rc == 1 and out["error"]["code"] in (("FAILURE_MODE_BLOCK",) if role == "pipeline_orchestrator" else
                                                    ("FAILURE_MODE_BLOCK", "PERMISSION_DENIED")), (role, out)
    rc, out = cli_json("acknowledge", RUN, "2.5", "3", "override", "--reason", "checked by hand", "--actor", "user",
                       cwd=repo)
    assert rc == 0 and out["blocking"] == [], out  # type: ignore[index]
    entry = api.StateDir(repo / "state").histories(RUN)["failure_modes"][-1]
    assert (entry["answered_by"], entry.get("via"), entry["reason"]) == ("user", None, "checked by hand")
    assert cli("stage", RUN, "2.5", "completed", cwd=repo).returncode == 0


def test_the_audit_in_show_ars_and_the_stage_6_summary(repo: Path, blocked: api.StateDir) -> None:
    sd = blocked
    sd.acknowledge_mode(RUN, "2.5", "3", "override", reason="checked by hand", actor="user")
    sd.stage(RUN, "2.5", "completed")
    sd.confirm(RUN, response="continue")
    sd.material(RUN, ["review_reports"])
    sd.stage(RUN, "3", "completed", decision="accept")
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "4.5", "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
    sd.checklist(RUN, "4.5", [*CLEAR_ITEMS[:2], "3=SUSPECTED", *CLEAR_ITEMS[3:]], actor=INTEGRITY)
    rc, out = cli_json("acknowledge", RUN, "4.5", "3", "override", "--reason", "x" * 10, cwd=repo)
    assert rc == 0 and out["override_round"] == 1  # type: ignore[index]  # per stage: 4.5's first
    sd.stage(RUN, "4.5", "completed")
    sd.confirm(RUN, response="continue", format="apa7")
    audit = json.loads(cli("show", RUN, "--format", "ars", cwd=repo).stdout)["failure_mode_audit"]
    assert audit["stage"] == "4.5"
    assert audit["modes"]["3"]["final_status"] == "OVERRIDDEN" and audit["modes"]["1"]["final_status"] == "CLEAR"
    assert [(h["stage"], h["outcome"]) for h in audit["modes"]["3"]["history"]] == [("2.5", "SUSPECTED"),
                                                                                      ("4.5", "SUSPECTED")]
    assert audit["modes"]["3"]["override_reasons"] == ["checked by hand", "x" * 10]
    assert "failure_mode_audit" not in sd.status(RUN)  # shown at the process summary
    sd.material(RUN, ["final_paper"])
    sd.stage(RUN, "5", "completed")
    sd.confirm(RUN, response="continue")
    status = sd.status(RUN)
    assert status["failure_mode_audit"] == audit
    assert "3 hallucinated result: OVERRIDDEN" in status["dashboard"] and "override: checked by hand" in status["dashboard"]
    assert sd.verify()["clean"]


# --- verify: each rule replayed -------------------------------------------------------------------
def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def _illegal(repo: Path) -> list[str]:
    found = json.loads(cli("verify", "--json", cwd=repo).stdout)
    return [f["message"] for f in found["findings"] if f["kind"] == "illegal"]


def test_verify_calls_a_checklist_that_clears_a_block_without_an_acknowledgement_illegal(
        repo: Path, blocked: api.StateDir) -> None:
    blocked.acknowledge_mode(RUN, "2.5", "3", "revise", actor="user")
    clean = blocked.checklist(RUN, "2.5", CLEAR_ITEMS, actor=INTEGRITY)
    message = _git(repo, "log", "-1", "--format=%B", clean["commit"])
    made = _git(repo, "commit-tree", f"{clean['commit']}^{{tree}}", "-p", f"{clean['commit']}~2", "-m", message)
    _git(repo, "reset", "-q", "--hard", made)  # the checklist made on the blocked run, its answer left out
    assert any("no new checklist replaces it" in m for m in _illegal(repo)), _illegal(repo)


def test_verify_calls_an_override_reason_shorter_than_its_round_allows_illegal(repo: Path, sd: api.StateDir) -> None:
    to_integrity(sd, RUN)
    sd.integrity(RUN, "2.5", "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
    sd.checklist(RUN, "2.5", ["1=SUSPECTED", "2=SUSPECTED", "3=SUSPECTED", *CLEAR_ITEMS[3:]], actor=INTEGRITY)
    sd.acknowledge_mode(RUN, "2.5", "1", "override", reason="one", actor="user")
    sd.acknowledge_mode(RUN, "2.5", "2", "override", reason="two", actor="user")
    third = sd.acknowledge_mode(RUN, "2.5", "3", "override", reason=LONG, actor="user")
    assert sd.verify()["clean"]
    message = _git(repo, "log", "-1", "--format=%B", third["commit"])
    assert LONG in message
    made = _git(repo, "commit-tree", f"{third['commit']}^{{tree}}", "-p", f"{third['commit']}~1", "-m",
                message.replace(LONG, "short"))
    _git(repo, "reset", "-q", "--hard", made)
    assert any("round 3" in m and "100 characters" in m for m in _illegal(repo)), _illegal(repo)

"""The rules on plain data: status moves, the stage graph, caps, checkpoints, permissions."""
from __future__ import annotations

import pytest

from statedir import errors
from statedir.engine.rules.decision import decide
from statedir.engine.transition_data import Request
from tests.support.runs import OLD_ACADEMIC, finish_to_five
from tests.support.sim import INTEGRITY, NOW, OBSERVER, ORCH, Sim


def refused(sim: Sim, code: str, action: str, actor: str = ORCH, reason: str | None = None, **args: object) -> str:
    with pytest.raises(errors.StatedirError) as info:
        sim.do(action, actor=actor, reason=reason, **args)
    assert info.value.code == code, info.value.message
    return info.value.message


# --- status rules ------------------------------------------------------------------------------------
def test_new_run_starts_initializing_at_entry_point() -> None:
    sim = Sim()
    assert sim.state["pipeline_state"] == "initializing"
    assert sim.state["current_stage"] == "1"
    assert all(sim.status(s) == "pending" for s in sim.t.stage_ids)


def test_status_only_advances() -> None:
    sim = Sim()
    sim.research()
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="1", status="in_progress")
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="1", status="pending")


def test_starting_a_later_stage_says_how_to_get_there() -> None:
    """Refused while the current stage is unfinished: finish it, then confirm; once it is done
    and its checkpoint open: confirm."""
    sim = Sim()
    sim.do("stage", stage="1", status="in_progress")
    message = refused(sim, "ILLEGAL_TRANSITION", "stage", stage="2", status="in_progress")
    assert f"complete it first (`statedir stage {sim.state['run_id']} 1 completed`)" in message
    sim.do("material", names=["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"])
    sim.do("stage", stage="1", status="completed")  # its checkpoint is open now
    message = refused(sim, "ILLEGAL_TRANSITION", "stage", stage="3", status="in_progress")
    assert "not the current stage (1)" in message and "complete it first" not in message
    assert message.endswith("move on with `statedir confirm`")


@pytest.mark.parametrize("stage", ["2.5", "4.5"])
def test_integrity_stages_are_never_skipped(stage: str) -> None:
    sim = Sim()
    assert "never be skipped" in refused(sim, "ILLEGAL_TRANSITION", "stage", stage=stage, status="skipped")


def test_a_status_move_refused_names_the_moves_there_are() -> None:
    """'cannot go from in_progress to skipped' named nothing a user could do instead."""
    sim = Sim()
    sim.do("stage", stage="1", status="in_progress")
    message = refused(sim, "ILLEGAL_TRANSITION", "stage", stage="1", status="skipped")
    assert message.endswith("cannot go from in_progress to skipped; it goes to completed or blocked"), message


def test_no_stage_is_skipped_by_hand_only_by_the_graph() -> None:
    """The spec's stage graph: only the graph's own skip lists make a stage skipped; a pending stage
    ahead set skipped by hand (and later started by a confirm) was the bug."""
    sim = Sim()
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="1", status="skipped")
    assert "stage graph" in refused(sim, "ILLEGAL_TRANSITION", "stage", stage="4p", status="skipped", reason="x")
    assert "stage graph" in refused(sim, "ILLEGAL_TRANSITION", "stage", stage="5", status="skipped", reason="x")
    assert sim.status("4p") == sim.status("5") == "pending"


def test_completion_needs_the_stage_requirements() -> None:
    sim = Sim()
    sim.research()
    sim.write()
    assert "PASS" in refused(sim, "ILLEGAL_TRANSITION", "stage", stage="2.5", status="completed")
    sim.integrity_pass()
    sim.do("confirm", response="continue")
    assert "decision" in refused(sim, "ILLEGAL_TRANSITION", "stage", stage="3", status="completed")
    sim.review("major_revision")
    sim.do("confirm", response="continue")
    assert "revision round" in refused(sim, "ILLEGAL_TRANSITION", "stage", stage="4", status="completed")


def test_fail_retries_stay_in_progress_and_are_capped_at_three() -> None:
    sim = Sim(OLD_ACADEMIC)
    sim.research()
    sim.write()
    for attempt in range(3):
        sim.fail_integrity(1)
        assert sim.status("2.5") == "in_progress"
        assert sim.run.stages["2.5"]["retry_count"] == attempt + 1
    assert [e["retry_count"] for e in sim.logs["integrity"]] == [0, 1, 2]
    refused(sim, "LIMIT_REACHED", "integrity", actor=INTEGRITY, stage="2.5", verdict="FAIL",
            refs_total=10, refs_verified=8)
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="2.5", status="completed")
    sim.do("stage", stage="2.5", status="completed", reason="continue with 'partially unverified' warning")
    assert sim.run.stages["2.5"]["fail_loop_decision"].startswith("continue")
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "3"


def test_the_fourth_attempt_goes_through_with_a_recorded_decision() -> None:
    sim = Sim(OLD_ACADEMIC)
    sim.research()
    sim.write()
    sim.fail_integrity(3)
    sim.do("integrity", actor=INTEGRITY, reason="handle manually", stage="2.5", verdict="PASS",
           refs_total=10, refs_verified=10)
    assert sim.logs["integrity"][-1]["decision"] == "handle manually"


def test_dialogue_log_ref_is_immutable_once_closed() -> None:
    sim = Sim()
    sim.do("stage", stage="1", status="in_progress", turns="#3..#9")
    sim.do("stage", stage="1", status="in_progress", turns="#3..#15")
    sim.do("material", names=["rq_brief"])
    sim.do("stage", stage="1", status="completed")
    assert sim.run.stages["1"]["dialogue_log_ref"] == "turns #3..#15"
    refused(sim, "IMMUTABLE_FIELD", "stage", stage="1", status="completed", turns="#3..#20")
    refused(sim, "INVALID_VALUE", "stage", stage="2", status="pending", turns="three to nine")


def test_nothing_moves_after_completed_or_aborted() -> None:
    sim = Sim()
    sim.do("pipeline", state="aborted", reason="stop")
    for action, args in [("stage", {"stage": "1", "status": "in_progress"}), ("confirm", {}),
                         ("material", {"names": ["rq_brief"]}), ("pipeline", {"state": "running"}),
                         ("loop", {}), ("set", {"field": "topic", "value": "x"})]:
        refused(sim, "RUN_TERMINAL", action, **args)


# --- the stage graph --------------------------------------------------------------------------------
def test_linear_part_of_the_graph() -> None:
    sim = Sim()
    sim.research()
    assert sim.state["current_stage"] == "2" and sim.status("2") == "in_progress"
    sim.write()
    assert sim.state["current_stage"] == "2.5"
    sim.integrity_pass()
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "3"


def test_accept_goes_to_final_integrity_skipping_revision_stages() -> None:
    sim = Sim()
    sim.to_review()
    sim.review("accept")
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "4.5"
    assert [sim.status(s) for s in ("4", "3p", "4p")] == ["skipped"] * 3


@pytest.mark.parametrize("decision", ["minor_revision", "major_revision"])
def test_revision_decisions_go_to_revise(decision: str) -> None:
    sim = Sim()
    sim.to_review()
    sim.review(decision)
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "4"
    assert sim.logs["schema_validation"][-1]["transition"] == "3 -> 4"


def test_reject_offers_restructure_or_abort() -> None:
    sim = Sim()
    sim.to_review()
    sim.review("reject")
    assert "--next" in refused(sim, "INVALID_VALUE", "confirm", response="continue")
    restructured = Sim()
    restructured.to_review()
    restructured.review("reject")
    restructured.do("confirm", response="continue", next="2")
    assert restructured.state["current_stage"] == "2"
    assert restructured.status("1") == "completed"
    assert restructured.status("2") == "in_progress"
    assert restructured.status("2.5") == "pending" and restructured.status("3") == "pending"
    assert restructured.run.stages["3"]["decision"] is None
    sim.do("confirm", response="continue", next="aborted")
    assert sim.state["pipeline_state"] == "aborted"
    assert sim.state["materials"]["paper_draft"] is True


@pytest.mark.parametrize("decision", ["accept", "minor_revision"])
def test_re_review_accept_or_minor_goes_to_final_integrity(decision: str) -> None:
    sim = Sim()
    sim.to_re_review()
    assert sim.state["current_stage"] == "3p"
    sim.review(decision, stage="3p")
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "4.5"
    assert sim.status("4p") == "skipped"
    assert decision in sim.run.stages["4p"]["reason"]


def test_re_review_major_goes_to_re_revise_then_only_final_integrity() -> None:
    sim = Sim()
    sim.to_re_review()
    sim.review("major_revision", stage="3p")
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "4p"
    sim.revise(stage="4p")
    assert "prohibited" in refused(sim, "ILLEGAL_TRANSITION", "confirm", response="continue", next="3p")
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "4.5"
    assert [e["stage"] for e in sim.logs["revisions"]] == ["3 -> 4", "3' -> 4'"]
    assert [e["round"] for e in sim.logs["revisions"]] == [1, 2]


@pytest.mark.parametrize(("verdict", "found", "fixed"), [("PASS_WITH_NOTES", 2, 2), ("PASS_WITH_NOTES", 1, 0),
                                                       ("PASS", 2, 1)])
def test_final_integrity_completes_only_on_what_leads_to_stage_five(verdict: str, found: int, fixed: int) -> None:
    """The gate to 5 is a PASS with zero open issues: stage 4.5 does not complete on less (it
    would open a checkpoint nothing can answer); the issues are fixed and checked again."""
    sim = Sim()
    sim.to_review()
    sim.review("accept")
    sim.do("confirm", response="continue")
    sim.do("integrity", actor=INTEGRITY, stage="4.5", verdict=verdict, refs_total=10, refs_verified=10,
           issues_found=found, issues_fixed=fixed)
    message = refused(sim, "ILLEGAL_TRANSITION", "stage", stage="4.5", status="completed")
    assert "PASS verdict with zero open issues" in message and "statedir integrity" in message
    assert sim.status("4.5") == "in_progress" and sim.state["pipeline_state"] == "running"
    sim.integrity_pass("4.5", verdict="PASS", issues=found)  # fixed and verified again
    sim.do("confirm", response="continue", format="apa7")
    assert sim.state["current_stage"] == "5"


def test_a_fail_loop_decision_at_final_integrity_lifts_the_cap_and_a_pass_leads_on() -> None:
    sim = Sim(OLD_ACADEMIC)
    sim.to_review()
    sim.review("accept")
    sim.do("confirm", response="continue")
    sim.fail_integrity(3, stage="4.5")
    refused(sim, "LIMIT_REACHED", "integrity", actor=INTEGRITY, stage="4.5", verdict="FAIL", refs_total=10,
            refs_verified=8)
    sim.do("integrity", actor=INTEGRITY, reason="remove unverifiable", stage="4.5", verdict="FAIL", refs_total=10,
           refs_verified=8)
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="4.5", status="completed")
    sim.integrity_pass("4.5")
    sim.do("confirm", response="continue", format="apa7")
    assert sim.state["current_stage"] == "5"


def test_stage_five_accepts_stage_six_then_terminal_ack() -> None:
    sim = Sim()
    finish_to_five(sim)
    assert sim.state["checkpoint"]["type"] == "FULL"
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "6"
    refused(sim, "ILLEGAL_TRANSITION", "confirm")  # as `stage 6 completed` is: the rules, not the input
    sim.do("confirm", response="review")
    assert sim.status("6") == "in_progress" and sim.state["pipeline_state"] == "running"
    sim.do("confirm", response="done")
    assert sim.status("6") == "completed" and sim.state["pipeline_state"] == "completed"
    assert sim.state["run_id"] == "r1"


def test_declining_stage_six_completes_with_six_skipped() -> None:
    sim = Sim()
    finish_to_five(sim)
    sim.do("confirm", response="continue", next="completed")
    assert sim.status("6") == "skipped" and sim.state["pipeline_state"] == "completed"


@pytest.mark.parametrize("source,target", [("1", "3"), ("2", "3"), ("4", "5"), ("3p", "5"), ("5", "3")])
def test_prohibited_transitions(source: str, target: str) -> None:
    sim = Sim()
    if source == "1":
        sim.do("stage", stage="1", status="in_progress")
        sim.do("stage", stage="1", status="completed")
    elif source == "2":
        sim.research()
        sim.do("material", names=["paper_draft"])
        sim.do("stage", stage="2", status="completed")
    elif source in ("4", "3p"):
        sim.to_review()
        sim.review("major_revision")
        sim.do("confirm", response="continue")
        sim.revise()
        if source == "3p":
            sim.do("confirm", response="continue")
            sim.review("accept", stage="3p")
    else:
        finish_to_five(sim)
    assert "prohibited" in refused(sim, "ILLEGAL_TRANSITION", "confirm", response="continue", next=target)
    assert sim.state["pipeline_state"] == "awaiting_confirmation"


def test_starting_a_later_stage_directly_is_refused() -> None:
    sim = Sim()
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="3", status="in_progress")


def test_pause_and_resume_return_to_where_it_left() -> None:
    sim = Sim()
    sim.research()
    sim.do("pipeline", state="paused")
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="2", status="completed")
    sim.do("pipeline", state="running")
    assert sim.state["pipeline_state"] == "running" and sim.state["current_stage"] == "2"
    sim.do("material", names=["paper_draft"])
    sim.do("stage", stage="2", status="completed")
    sim.do("pipeline", state="paused")
    sim.do("pipeline", state="running")
    assert sim.state["pipeline_state"] == "awaiting_confirmation"


# --- mid-entry ---------------------------------------------------------------------------------------
def passport(hours_ago: float, status: str = "VERIFIED") -> dict[str, object]:
    import datetime

    when = datetime.datetime(2026, 11, 29, 12, tzinfo=datetime.timezone.utc) - datetime.timedelta(hours=hours_ago)
    return {"version_label": "paper_draft_v3", "origin_skill": "academic-paper", "origin_mode": "full",
            "origin_date": "2026-11-20T00:00:00Z", "verification_status": status, "content_hash": DRAFT["content_hash"],
            "integrity_pass_date": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "materials": ["paper_draft"]}


DRAFT = {"path": "draft.md", "content_hash": "d" * 64}  # the file the passport above stands for, as brought


def test_mid_entry_at_integrity_skips_earlier_stages() -> None:
    sim = Sim(entry="2.5")
    assert sim.status("1") == "skipped" and sim.status("2") == "skipped"
    assert sim.state["current_stage"] == "2.5"


def test_mid_entry_cannot_skip_integrity_without_a_fresh_verified_passport() -> None:
    """...on the file it stands for, of the last integrity check it skips (a pre-review pass never
    stands for stage 4.5's), with the reviewer comments registered at entry when entering at 4."""
    from statedir.errors import IllegalTransition, InvalidValue

    with pytest.raises(IllegalTransition):
        Sim(entry="3")
    with pytest.raises(IllegalTransition, match="STALE"):
        Sim(entry="3", passport=passport(30), confirm_skip=True)
    with pytest.raises(IllegalTransition, match="UNVERIFIED"):
        Sim(entry="3", passport=passport(1, "UNVERIFIED"), confirm_skip=True)
    with pytest.raises(IllegalTransition, match="confirm"):
        Sim(entry="3", passport=passport(1))
    with pytest.raises(IllegalTransition, match="--file"):
        Sim(entry="3", passport=passport(1), confirm_skip=True)
    with pytest.raises(IllegalTransition, match="content_hash"):
        Sim(entry="3", passport={**passport(1), "content_hash": None}, confirm_skip=True, file=DRAFT)
    with pytest.raises(IllegalTransition, match="stage 4.5 is never satisfied"):  # a pre-review pass, at 5
        Sim(entry="5", passport=passport(1), confirm_skip=True, file=DRAFT)
    with pytest.raises(InvalidValue, match="--entry-material"):
        Sim(entry="4", passport=passport(1), confirm_skip=True, file=DRAFT)
    final = Sim(entry="5", passport={**passport(1), "integrity_mode": "final-check"}, confirm_skip=True, file=DRAFT)
    assert final.state["materials"]["integrity_report_final"] and final.status("4.5") == "completed"
    revise = Sim(entry="4", passport=passport(1), confirm_skip=True, file=DRAFT,
                 brought=[{"path": "comments.md", "content_hash": "c" * 64}])
    assert revise.state["current_version"]["review"] == "review_v1" and revise.state["materials"]["review_reports"]
    sim = Sim(entry="3", passport=passport(1), confirm_skip=True, file=DRAFT)
    assert sim.status("2.5") == "completed" and "paper_draft_v3" in sim.run.stages["2.5"]["reason"]
    assert sim.state["current_version"]["paper_draft"] == "paper_draft_v3"
    assert sim.state["materials"]["integrity_report_pre"]  # what the passport stands for, registered at entry
    refused(sim, "PERMISSION_DENIED", "material", names=["integrity_report_pre"])
    sim.do("stage", stage="3", status="in_progress")
    sim.do("material", names=["paper_draft"])
    assert sim.state["current_version"]["paper_draft"] == "paper_draft_v4"


# --- prerequisites ----------------------------------------------------------------------------------
def test_prerequisites_block_and_recommendations_warn() -> None:
    sim = Sim()
    sim.do("stage", stage="1", status="in_progress")
    sim.do("stage", stage="1", status="completed")
    change = sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "2"
    del change
    sim.do("stage", stage="2", status="completed")
    message = refused(sim, "PREREQUISITES_MISSING", "confirm", response="continue")
    assert "paper_draft" in message
    entry = Sim(entry="2")
    change = entry.do("stage", stage="2", status="in_progress")
    assert "rq_brief" in change.result["warning"]


# --- write access -----------------------------------------------------------------------------------
MUTATING = {
    "stage": {"stage": "1", "status": "in_progress"}, "pipeline": {"state": "paused"},
    "set": {"field": "topic", "value": "new"}, "material": {"names": ["rq_brief"]},
    "loop": {}, "confirm": {}, "redo": {"stage": "1"}, "output": {"stage": "1", "outputs": ["x"]},
    "integrity": {"stage": "2.5", "verdict": "PASS", "refs_total": 1, "refs_verified": 1},
    "revision": {"items_total": 1}, "seal": {"sealed": []},
    "bind": {"family": "re_review_traceability", "unavailable": "source_not_provided"},
}
ALLOWED = {
    ORCH: {"stage", "pipeline", "set", "material", "loop", "confirm", "redo", "revision", "bind", "seal"},
    INTEGRITY: {"integrity"},
    OBSERVER: set(),
    "deep-research": {"output"},
    "academic-paper": set(),
    "somebody": set(),
}


@pytest.mark.parametrize("actor", sorted(ALLOWED))
@pytest.mark.parametrize("action", sorted(MUTATING))
def test_permission_matrix(actor: str, action: str) -> None:
    sim = Sim()
    try:
        sim.do(action, actor=actor, **MUTATING[action])
    except errors.StatedirError as exc:
        if action in ALLOWED[actor]:
            assert exc.code != "PERMISSION_DENIED", exc.message
        else:
            assert exc.code == "PERMISSION_DENIED", (exc.code, exc.message)
    else:
        assert action in ALLOWED[actor]


def test_integrity_verification_writes_integrity_only() -> None:
    sim = Sim()
    sim.research()
    sim.write()
    refused(sim, "PERMISSION_DENIED", "output", actor=INTEGRITY, stage="2.5", outputs=["x"])
    refused(sim, "PERMISSION_DENIED", "stage", actor=INTEGRITY, stage="2.5", status="completed")
    refused(sim, "PERMISSION_DENIED", "material", actor=INTEGRITY, names=["paper_draft"])
    refused(sim, "PERMISSION_DENIED", "pipeline", actor=INTEGRITY, state="paused")
    sim.do("integrity", actor=INTEGRITY, stage="2.5", verdict="PASS", refs_total=1, refs_verified=1)


def test_observer_reports_are_advisory_and_never_at_mandatory_checkpoints() -> None:
    sim = Sim()
    sim.research()
    report = {"zone": "Zone 2", "advisory_only": True, "scores": {"delegation_intensity": 4}}
    refused(sim, "PERMISSION_DENIED", "observe", actor=ORCH, stage="1", checkpoint="FULL", report=report)
    refused(sim, "PERMISSION_DENIED", "observe", actor=OBSERVER, stage="1", checkpoint="FULL",
            report={**report, "advisory_only": False})
    refused(sim, "INVALID_VALUE", "observe", actor=OBSERVER, stage="1", checkpoint="FULL",
            report={**report, "current_stage": "3"})  # bad input, not a permission: the report is mis-shaped
    before = sim.run.state
    change = sim.do("observe", actor=OBSERVER, stage="1", checkpoint="FULL", report=report)
    assert change.state is None and not change.stages and sim.run.state == before
    sim.write()
    sim.integrity_pass()
    refused(sim, "PERMISSION_DENIED", "observe", actor=OBSERVER, stage="2.5", checkpoint="FULL", report=report)


# --- checkpoints -------------------------------------------------------------------------------------
def test_checkpoint_policy() -> None:
    sim = Sim()
    sim.research()
    assert sim.logs["checkpoints"][0]["type"] == "FULL"  # the first is FULL
    sim.do("material", names=["paper_draft"])
    sim.do("stage", stage="2", status="completed")
    assert sim.state["checkpoint"]["type"] == "FULL"
    sim.do("confirm", response="just-continue")
    assert sim.state["slim_checkpoints"] is True
    sim.integrity_pass()
    assert sim.state["checkpoint"]["type"] == "MANDATORY"
    assert sim.state["checkpoint"]["awareness_prompt"] is True  # two continues so far
    assert "automatically" in refused(sim, "ILLEGAL_TRANSITION", "confirm")
    assert "automatically" in refused(sim, "ILLEGAL_TRANSITION", "confirm", response="just-continue")
    sim.do("confirm", response="continue")
    sim.review("major_revision")
    sim.do("confirm", response="continue")
    sim.revise()
    assert sim.state["checkpoint"]["type"] == "FULL"  # four continues: forced FULL
    sim.do("confirm", response="review")
    assert sim.state["consecutive_continue_count"] == 0


def test_slim_after_just_continue() -> None:
    sim = Sim("linear")
    sim.do("stage", stage="plan", status="in_progress")
    sim.do("stage", stage="plan", status="done")
    sim.do("confirm", response="just-continue")
    sim.do("material", names=["output"])
    sim.do("stage", stage="build", status="done")
    assert sim.state["checkpoint"]["type"] == "SLIM"


# --- counters, redo, seal -------------------------------------------------------------------------
def test_loop_is_capped() -> None:
    sim = Sim()
    sim.do("loop")
    refused(sim, "LIMIT_REACHED", "loop")


def test_redo_reopens_and_bumps_versions() -> None:
    sim = Sim()
    sim.research()
    sim.write()
    assert sim.state["current_version"]["paper_draft"] == "paper_draft_v1"
    sim.do("redo", stage="2", reason="restructure the argument")
    assert sim.state["current_stage"] == "2" and sim.status("2") == "in_progress"
    assert sim.status("2.5") == "pending"
    assert sim.state["current_version"]["paper_draft"] == "paper_draft_v2"
    assert sim.all_passports["paper_draft_v2"]["derived_from"] == "paper_draft_v1"
    refused(sim, "ILLEGAL_TRANSITION", "redo", stage="3", reason="x")


def test_integrity_pass_verifies_the_draft_and_new_upstream_makes_dependents_stale() -> None:
    sim = Sim()
    sim.research()
    sim.do("material", names=["paper_draft"], upstream=["research_v1"])
    sim.do("stage", stage="2", status="completed")
    sim.do("confirm", response="continue")
    sim.integrity_pass()
    draft = sim.run.passports["paper_draft_v1"]
    assert draft["verification_status"] == "VERIFIED" and draft["integrity_pass_date"]
    assert sim.state["materials"]["verified_paper_draft"] is True
    assert sim.run.passports["integrity_mid_v1"]["upstream_dependencies"] == ["paper_draft_v1"]
    change = sim.do("material", names=["rq_brief"])
    assert change.result["version_label"] == "research_v2"
    assert sim.run.passports["paper_draft_v1"]["verification_status"] == "STALE"
    refused(sim, "UNKNOWN_MATERIAL", "material", names=["paper_draft"], upstream=["research_v9"])
    refused(sim, "INVALID_VALUE", "material", names=["paper_draft", "rq_brief"])


def test_seal_only_after_terminal_and_leaves_it_unchanged() -> None:
    from statedir.engine.adjudication_contract import initial_rows

    sim = Sim()
    rows = initial_rows()
    assert sim.state["pending_adjudication_activity_bindings"] == rows
    refused(sim, "ILLEGAL_TRANSITION", "seal", sealed=rows)
    sim.do("pipeline", state="aborted")
    refused(sim, "INVALID_VALUE", "seal", sealed=rows[:4])
    before = {k: v for k, v in sim.state.items() if k != "updated_at"}
    sim.do("seal", sealed=rows)
    assert sim.state["adjudication_activity_sources"] == rows
    assert {k: v for k, v in sim.state.items() if k not in ("updated_at", "adjudication_activity_sources")} == before
    assert decide(sim.t, sim.run, Request("seal", ORCH, {"sealed": rows}), NOW) is None  # same rows: no-op
    changed = [dict(rows[0])] + rows[1:]
    changed[2] = {**rows[2], "capture_state": "unavailable", "reason_code": "source_invalid"}
    refused(sim, "ILLEGAL_TRANSITION", "seal", sealed=changed)
    refused(sim, "ILLEGAL_TRANSITION", "bind", family="compliance_report", unavailable="source_invalid")


def test_vocabulary_edges() -> None:
    sim = Sim()
    assert "unknown status" in refused(sim, "INVALID_VALUE", "stage", stage="1", status="stalled")
    sim.do("stage", stage="1", status="blocked", reason="waiting for data")
    sim.do("stage", stage="1", status="in_progress")
    sim.do("stage", stage="1", status="blocked")
    sim.do("stage", stage="1", status="in_progress")
    assert sim.status("1") == "in_progress" and sim.state["pipeline_state"] == "running"
    sim.do("material", names=["paper_draft"])
    sim.do("stage", stage="1", status="completed")
    sim.do("confirm", response="continue")
    sim.do("stage", stage="2", status="completed")
    sim.do("confirm", response="continue")
    sim.do("integrity", actor=INTEGRITY, stage="2.5", verdict="PASS_WITH_CONDITIONS", refs_total=3,
           refs_verified=3)
    assert sim.run.stages["2.5"]["verdict"] == "PASS_WITH_NOTES"
    refused(sim, "INVALID_VALUE", "integrity", actor=INTEGRITY, stage="2.5", verdict="GREAT", refs_total=1,
            refs_verified=1)
    refused(sim, "INVALID_VALUE", "integrity", actor=INTEGRITY, stage="2.5", verdict="PASS", refs_total=1,
            refs_verified=2)


def test_version_labels_follow_the_series_table() -> None:
    sim = Sim()
    expected = {("rq_brief", "bibliography"): "research_v1", ("paper_draft",): "paper_draft_v1",
                ("revised_draft",): "paper_draft_v2", ("re_revised_draft",): "paper_draft_v3",
                ("review_reports",): "review_v1", ("re_review_report",): "review_v2",
                ("revision_roadmap",): "roadmap_v1", ("response_to_reviewers",): "revision_v1",
                ("editorial_decision",): "editorial_decision_v1", ("final_paper",): "final_paper_v1"}
    for names, label in expected.items():
        assert sim.do("material", names=list(names)).result["version_label"] == label
    for name in ("integrity_report_pre", "integrity_report_final", "verified_paper_draft"):
        assert "only from an integrity check" in refused(sim, "PERMISSION_DENIED", "material", names=[name])
    old = Sim(OLD_ACADEMIC)  # the rules of 3.21: any material by `material`
    assert old.do("material", names=["integrity_report_pre"]).result["version_label"] == "integrity_mid_v1"
    assert sim.state["current_version"]["paper_draft"] == "paper_draft_v3"
    assert sim.state["version_counters"]["review"] == 2


def test_completed_requires_the_last_stage_done_or_declined() -> None:
    sim = Sim()
    assert "stage 6" in refused(sim, "ILLEGAL_TRANSITION", "pipeline", state="completed")
    refused(sim, "ILLEGAL_TRANSITION", "pipeline", state="awaiting_confirmation")
    refused(sim, "INVALID_VALUE", "pipeline", state="finished")

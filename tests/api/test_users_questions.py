"""What the API says the user is asked (statedir/api/users_questions.py): a MANDATORY checkpoint's
question read off the run, nothing where no answer of the user's is open, and a role that may not
carry the user's answer refused before anyone is asked."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from statedir import api
from statedir.api import users_questions
from statedir.errors import PermissionDenied
from tests.support.runs import warned_then_blocked
from tests.support.util import at_mandatory_2_5, copy_of, to_integrity


def test_an_open_mandatory_checkpoint_is_the_users_question(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("users-questions-mandatory", at_mandatory_2_5, repo, tmp_path_factory)[0]
    t, run, _ = sd.load("p")
    asked = users_questions.asked("confirm", t, run, {"response": "continue"})  # the agent's response fills nothing
    assert asked is not None
    assert (asked.run_id, asked.stage, asked.about, asked.answers) == ("p", "2.5", "checkpoint", "response")
    assert asked.responses == ("continue", "review") and asked.choices == ("3",) and asked.next_default == "3"
    assert "MANDATORY" in asked.message and "yours to answer" in asked.message
    # a FAIL-loop resolution, an acknowledgement, a compliance report: none open on this run
    assert [users_questions.asked(c, t, run, {"stage": "2.5", "mode": "3", "override": True})
            for c in ("resolve", "acknowledge", "compliance")] == [None, None, None]
    assert users_questions.asked("stage", t, run, {}) is None  # not a command the user answers


def test_no_question_where_no_checkpoint_is_open(sd: api.StateDir) -> None:
    sd.new("r", topic="T")
    t, run, _ = sd.load("r")
    assert users_questions.asked("confirm", t, run, {}) is None
    assert users_questions.asked("compliance", t, run, {"stage": "1"}) is None  # a report, no override


def test_a_role_that_may_not_carry_the_users_answer_is_refused(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sd = copy_of("users-questions-mandatory", at_mandatory_2_5, repo, tmp_path_factory)[0]
    t, run, _ = sd.load("p")
    users_questions.carried("confirm", t, run, "pipeline_orchestrator", "mcp-elicitation")  # may relay it
    with pytest.raises(PermissionDenied) as refused:
        users_questions.carried("confirm", t, run, "integrity_verification", "mcp-elicitation")
    assert "a server started for that role asks the user" in refused.value.message


def _blocked_by_mode_1(sd: api.StateDir) -> None:
    to_integrity(sd, "b", "2.5")
    sd.checklist("b", "2.5", ["1=SUSPECTED", *(f"{m}=CLEAR" for m in range(2, 8))], actor="integrity_verification")


def test_every_override_question_says_what_its_reason_needs_in_one_way(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A failure-mode acknowledgement and a compliance acknowledgement both name their override
    round and the reason's least length in the FAIL-loop resolution's words."""
    sd = copy_of("users-questions-mode-1", _blocked_by_mode_1, repo, tmp_path_factory)[0]
    t, run, _ = sd.load("b")
    mode = users_questions.asked("acknowledge", t, run, {"stage": "2.5", "mode": "1"})
    sd = copy_of("users-questions-compliance", warned_then_blocked, repo, tmp_path_factory)[0]
    t, run, _ = sd.load("r")
    report = users_questions.asked("compliance", t, run, {"stage": "2.5", "override": True})
    assert mode is not None and report is not None
    reasons = [line for asked in (mode, report) for line in asked.message.splitlines() if line.startswith("Reason:")]
    assert len(reasons) == 2
    assert all(re.fullmatch(r"Reason: override round \d+ of this stage; it (may be left out|is needed|needs at least \d+ characters)\.",
                            line) for line in reasons), reasons

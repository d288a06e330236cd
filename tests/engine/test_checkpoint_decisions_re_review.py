"""After a failed re-review check stage 3' awaits the user (decision user_review_required), and the
user's answer picks one of accept, minor_revision, major_revision (academic-pipeline 3.23,
checkpoint_decisions 3p): `confirm --decision D` records it as stage 3''s decision and the next
stage follows from it by the graph; no pick, another value or a route name (--next) is refused with
the allowed answers, nothing written. A run made on 3.22 keeps answering with --next."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.files import schema
from statedir.store import run_logs
from tests.support.runs import at_re_review, awaiting_the_user
from tests.support.sim import Sim
from tests.support.util import cli, cli_json, cli_refused, copy_of

ALLOWED = "--decision accept|minor_revision|major_revision"


@pytest.fixture
def asked(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    return copy_of("re-review-user-answer", awaiting_the_user, repo, tmp_path_factory)[0]


def test_any_answer_but_a_pick_of_the_three_is_refused_naming_them(asked: api.StateDir, repo: Path) -> None:
    answer = ("confirm", "r1", "--response", "continue", "--actor", "user")
    for extra in ([], ["--next", "4p"], ["--next", "4.5"], ["--decision", "reject"],
                  ["--decision", "user_review_required"], ["--decision", "major_revision", "--next", "4p"],
                  ["--format", "apa7"]):
        error = cli_refused(repo, "INVALID_VALUE", *answer, *extra)
        assert ("accept, minor_revision, major_revision" in error["message"] or ALLOWED in error["message"]
                or "--format answers the checkpoint after stage 4.5" in error["message"]), (extra, error)
    error = cli_refused(repo, "INVALID_VALUE", *answer, "--next", "4p")
    assert "names a stage, not a decision" in error["message"] and ALLOWED in error["message"]
    assert error["details"]["allowed"] == ["accept", "minor_revision", "major_revision"]


@pytest.mark.parametrize(("pick", "then"), [("major_revision", "4p"), ("minor_revision", "4.5"), ("accept", "4.5")])
def test_the_users_pick_is_the_decision_and_the_graph_follows_it(asked: api.StateDir, repo: Path, pick: str,
                                                                 then: str) -> None:
    code, moves = cli_json("next", "r1", cwd=repo)
    confirms = [m for m in moves["moves"] if m["command"] == "confirm"]  # type: ignore[index]
    assert sorted(v for m in confirms for v in m["allowed"]["decision"]) == sorted(
        ["accept", "minor_revision", "major_revision"]), confirms
    assert all("next" not in m["allowed"] for m in confirms)
    code, out = cli_json("confirm", "r1", "--decision", pick, "--response", "continue", "--actor", "user", cwd=repo)
    assert code == 0 and out["next"] == then, out  # type: ignore[index]
    shown = asked.show("r1")
    assert shown["stages"]["3p"]["decision"] == pick and shown["current_stage"] == then
    assert shown["stages"]["3p"]["contract"]["check"]["outcome"] == "synthesis_mismatch"  # the check stays on record
    if then == "4.5":
        assert shown["stages"]["4p"]["status"] == "skipped"
    entry = run_logs.read(asked.store, asked.store.run_dir("r1"), "checkpoints")[-1]
    assert entry["answer"] == {"decision": pick} and entry["next"] == then
    receipt = run_logs.read(asked.store, asked.store.run_dir("r1"), "mandatory_checkpoint_response")[-1]
    assert receipt["stage"] == "3p" and receipt["answer"] == {"decision": pick}
    assert f"decision {pick}, the user's" in cli("log", "r1", "--limit", "1", cwd=repo).stdout
    assert cli("verify", cwd=repo).returncode == 0


def test_a_passing_check_takes_no_pick(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.support.util import contract_holds

    def passed(sd: api.StateDir) -> None:
        at_re_review(sd)
        sd.material("r1", ["re_review_report"])
        contract_holds(sd, "r1")
        sd.stage("r1", "3p", "completed", decision="minor_revision")
    sd = copy_of("re-review-passed", passed, repo, tmp_path_factory)[0]
    error = cli_refused(repo, "INVALID_VALUE", "confirm", "r1", "--response", "continue", "--decision", "accept")
    assert "where its decision is the user's" in error["message"]
    assert cli("confirm", "r1", "--response", "continue", cwd=repo).returncode == 0
    assert sd.get("r1", "current_stage") == "4.5"


def awaiting(sim: Sim) -> None:
    sim.to_re_review()
    sim.do("material", names=["re_review_report"])
    sim.contract_holds(exit_code=1)
    sim.do("stage", stage="3p", status="completed")


def test_the_pick_is_3_23s_template_data_and_a_3_22_run_answers_with_next() -> None:
    new = Sim()
    awaiting(new)
    with pytest.raises(StatedirError) as exc:
        new.do("confirm", response="continue", next="4p")
    assert exc.value.code == "INVALID_VALUE"
    old = Sim(str(schema.data_dir("templates") / "academic-pipeline@3.22.yaml"))
    awaiting(old)
    with pytest.raises(StatedirError) as exc:  # 3.22 knows no pick
        old.do("confirm", response="continue", next="4p", decision="major_revision")
    assert exc.value.code == "INVALID_VALUE" and "takes the user's pick" in exc.value.message
    assert old.do("confirm", response="continue", next="4p").result["next"] == "4p"
    assert old.run.stages["3p"]["decision"] == "user_review_required"

"""The Stage 5 entry checkpoint's answer: the finalization format (confirm --format STYLE), also
the answer a resumed reset boundary gives; a stage's assigned_to and team_notes set by `set`."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.files import schema
from statedir.store import run_logs
from tests.support.ars import RE_REVIEW
from tests.support.runs import at_re_review
from tests.support.sim import Sim
from tests.support.util import CLEAR_ITEMS, cli, cli_json, contract_holds, copy_of, snapshot, stage_one_done

RUN = "run-5"
INTEGRITY = "integrity_verification"


def to_stage5_entry(sd: api.StateDir) -> None:
    """Stage 4.5 passed and completed: the Stage 5 entry checkpoint (MANDATORY) open."""
    at_re_review(sd, RUN, **RE_REVIEW)
    sd.material(RUN, ["re_review_report"])
    contract_holds(sd, RUN)
    sd.stage(RUN, "3p", "completed", decision="accept")
    sd.confirm(RUN, response="continue")
    sd.integrity(RUN, "4.5", "PASS", refs_total=3, refs_verified=3, issues_found=0, issues_fixed=0, actor=INTEGRITY)
    sd.checklist(RUN, "4.5", CLEAR_ITEMS, actor=INTEGRITY)
    sd.stage(RUN, "4.5", "completed")


@pytest.fixture
def at_entry(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    return copy_of("stage5-entry", to_stage5_entry, repo, tmp_path_factory)[0]


def test_the_format_decision_is_the_checkpoints_answer(at_entry: api.StateDir, repo: Path) -> None:
    sd = at_entry
    code, moves = cli_json("next", RUN, cwd=repo)
    [confirm] = [m for m in moves["moves"] if m["command"] == "confirm"]
    assert "format" in confirm["args"], confirm  # the user's decision, never optional here (3.24)
    assert confirm["allowed"]["format"] == ["apa7", "chicago", "mla", "ieee", "vancouver", "harvard"]
    code, out = cli_json("confirm", RUN, "--response", "continue", "--format", "apa7", cwd=repo)
    assert code == 0, out
    assert sd.show(RUN)["stages"]["5"]["answers"] == {"citation_style": "apa7"}
    answered = [e for e in run_logs.read(sd.store, sd.store.run_dir(RUN), "checkpoints") if e["event"] == "answered"]
    assert answered[-1]["answer"] == {"citation_style": "apa7"}
    receipt = run_logs.read(sd.store, sd.store.run_dir(RUN), "mandatory_checkpoint_response")[-1]
    assert receipt["stage"] == "4.5" and receipt["answer"] == {"citation_style": "apa7"}
    assert cli("verify", cwd=repo).returncode == 0


@pytest.mark.parametrize(("style", "needle"), [("mla8", "apa7, chicago, mla, ieee, vancouver, harvard")])
def test_an_unknown_style_is_refused_naming_the_styles(at_entry: api.StateDir, repo: Path, style: str,
                                                          needle: str) -> None:
    before = snapshot(repo)
    code, out = cli_json("confirm", RUN, "--response", "continue", "--format", style, cwd=repo)
    assert code != 0 and out["error"]["code"] == "INVALID_VALUE" and needle in out["error"]["message"]
    assert snapshot(repo) == before


def test_going_on_to_stage_5_without_the_format_is_refused(at_entry: api.StateDir, repo: Path) -> None:
    """The Stage 5 entry is where the user makes the finalization-format decision (seed 002,
    adaptive rule 5): an answer starting stage 5 without it is refused, nothing written."""
    before = snapshot(repo)
    for args in (["--response", "continue"], ["--response", "review"], ["--response", "continue", "--next", "5"]):
        code, out = cli_json("confirm", RUN, *args, cwd=repo)
        assert code != 0 and out["error"]["code"] == "INVALID_VALUE", (args, out)
        assert "--format apa7|chicago|mla|ieee|vancouver|harvard" in out["error"]["message"], out
        assert snapshot(repo) == before
    with pytest.raises(StatedirError) as exc:
        at_entry.confirm(RUN, response="continue")
    assert exc.value.code == "INVALID_VALUE" and "format=" in exc.value.message
    assert snapshot(repo) == before


def test_a_run_made_on_3_23_still_goes_on_without_the_format() -> None:
    """3.23 took the format when given: its runs keep that rule (academic-pipeline@3.23.yaml)."""
    for name, goes_on in ((str(schema.data_dir("templates") / "academic-pipeline@3.23.yaml"), True),
                          ("academic-pipeline", False)):
        sim = Sim(name)
        sim.to_review()
        sim.review("accept")
        sim.do("confirm", response="continue")
        sim.integrity_pass("4.5")
        if not goes_on:
            with pytest.raises(StatedirError) as exc:
                sim.do("confirm", response="continue")
            assert exc.value.code == "INVALID_VALUE"
            sim.do("confirm", response="continue", format="ieee")
            assert sim.run.stages["5"]["answers"] == {"citation_style": "ieee"}
        else:
            sim.do("confirm", response="continue")
            assert "answers" not in sim.run.stages["5"]
        assert sim.state["current_stage"] == "5"


def test_format_at_another_checkpoint_is_refused(sd: api.StateDir, repo: Path) -> None:
    stage_one_done(sd, RUN)
    before = snapshot(repo)
    with pytest.raises(StatedirError) as exc:
        sd.confirm(RUN, format="apa7")
    assert exc.value.code == "INVALID_VALUE" and "after stage 4.5" in exc.value.message
    assert snapshot(repo) == before


def test_assigned_to_and_team_notes_are_set_on_the_stage_file(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    code, out = cli_json("set", RUN, "stages.5.assigned_to", "alice", "--reason", "she finalizes", cwd=repo)
    assert code == 0, out
    cli_json("set", RUN, "stages.5.team_notes", "APA unless the venue says otherwise", "--reason", "n", cwd=repo)
    text = (repo / "state" / "runs" / RUN / "stages" / "5.yaml").read_text()
    assert "assigned_to: alice" in text and "team_notes: APA unless the venue says otherwise" in text
    assert cli_json("set", RUN, "stages.5.assigned_to", "", "--reason", "clear", cwd=repo)[0] == 0
    assert sd.show(RUN)["stages"]["5"]["assigned_to"] is None
    before = snapshot(repo)
    for args, code_ in ((["stages.5.status", "completed"], "INVALID_VALUE"), (["stages.9.assigned_to", "bob"],
                        "UNKNOWN_STAGE"), (["stages.5.team_notes", "x" * 5000], "INVALID_VALUE"),
                        (["stages.5.assigned_to", ""], "ILLEGAL_TRANSITION")):
        code, out = cli_json("set", RUN, *args, "--reason", "r", cwd=repo)
        assert code != 0 and out["error"]["code"] == code_, (args, out)
        assert snapshot(repo) == before
    code, out = cli_json("set", RUN, "stages.5.status", "completed", "--reason", "r", cwd=repo)
    assert "stages.STAGE.assigned_to" in out["error"]["message"]


def test_a_stage_whose_id_holds_a_dot_takes_its_fields_and_next_offers_them(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t", entry_point="2.5")
    for stage in ("2.5", "4.5", "3'"):
        code, out = cli_json("set", RUN, f"stages.{stage}.assigned_to", "alice", "--reason", "r", cwd=repo)
        assert code == 0, out
    assert sd.show(RUN)["stages"]["4.5"]["assigned_to"] == "alice" and sd.show(RUN)["stages"]["3p"]["assigned_to"] == "alice"
    [move] = [m for m in sd.next(RUN)["moves"] if m["command"] == "set"]
    current = sd.get(RUN, "current_stage")
    assert {f"stages.{current}.assigned_to", f"stages.{current}.team_notes"} <= set(move["allowed"]["field"]), move
    assert sd.verify()["clean"]

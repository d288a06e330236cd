"""`statedir next`: the legal moves from a run's state, found by asking the rules, through the
real CLI on real git repositories; a refusal carries the same moves; and a whole run driven to
`completed` by taking only moves `next` listed."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.engine import next_moves
from tests.support.next_driver import choose, fill_in, pick
from tests.support.refusals import counted_words
from tests.support.util import CLEAR_ITEMS, cli, cli_json, copy_of, past_stage_one, to_integrity

RUN = "r1"
INTEGRITY = "integrity_verification"


def moves_of(repo: Path, run: str = RUN) -> dict[str, Any]:
    code, out = cli_json("next", run, cwd=repo)
    assert code == 0, out
    assert isinstance(out, dict) and set(out) >= {"run_id", "moves", "blocked"}
    return out


def find(result: dict[str, Any], command: str, **fixed: Any) -> list[dict[str, Any]]:
    """The listed moves of `command` whose allowed values include each of `fixed`."""
    return [m for m in result["moves"] if m["command"] == command
            and all(value in m["allowed"].get(name, []) for name, value in fixed.items())]


@pytest.fixture
def at_final_integrity(sd: api.StateDir, repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    """The run at stage 4.5 in progress (`to_integrity(sd, "4.5")`): made once per process and copied."""
    return copy_of("next-moves-at-4.5", lambda made: to_integrity(made, RUN, "4.5"), repo, tmp_path_factory)[0]


def test_a_fresh_run_may_start_its_first_stage(sd: api.StateDir, repo: Path) -> None:
    sd.new(RUN, topic="t")
    out = moves_of(repo)
    assert out["run_id"] == RUN and out["current_stage"] == "1" and out["pipeline_state"] == "initializing"
    first = out["moves"][0]
    assert first == {"command": "stage", "args": ["stage", "status"],
                     "allowed": {"stage": ["1"], "status": ["in_progress"]}, "actor": "pipeline_orchestrator",
                     "leads_to": {"current_stage": "1", "pipeline_state": "running"}, "likely": True}
    assert [m for m in out["moves"] if m.get("likely")] == [first]  # the move that carries the run on, first
    assert not find(out, "confirm") and not find(out, "integrity") and not find(out, "redo")
    assert find(out, "pipeline", state="aborted") and find(out, "material", names="rq_brief")
    assert not find(out, "stage", status="skipped")  # only the stage graph skips stages, through a decision
    assert out["blocked"] == []


def test_mid_run_the_owner_outputs_and_the_orchestrator_completes(sd: api.StateDir, repo: Path) -> None:
    past_stage_one(sd, RUN, "t")
    out = moves_of(repo)
    assert out["current_stage"] == "2" and out["pipeline_state"] == "running"
    assert find(out, "stage", stage="2", status="completed")
    assert [m["actor"] for m in find(out, "output", stage="2")] == ["academic-paper"]  # the stage's skill
    assert find(out, "redo", stage="1")[0]["args"] == ["stage", "reason"]
    assert not find(out, "confirm") and not find(out, "stage", stage="2", status="in_progress")
    text = cli("next", RUN, cwd=repo)
    assert text.returncode == 0
    assert "statedir stage r1 2 completed" in text.stdout and "academic-paper" in text.stdout
    assert "statedir redo r1 1 --reason TEXT" in text.stdout


def test_at_a_mandatory_checkpoint_confirm_needs_an_explicit_answer(sd: api.StateDir, repo: Path) -> None:
    to_integrity(sd, RUN)
    blocked = moves_of(repo)
    assert find(blocked, "integrity", stage="2.5", verdict="PASS")[0]["actor"] == INTEGRITY
    needs = {e["move"]["command"]: e["needs"] for e in blocked["blocked"]}
    assert "PASS or PASS_WITH_NOTES" in needs["stage"][0]  # completing 2.5 waits for a verdict
    sd.integrity(RUN, "2.5", "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
    sd.checklist(RUN, "2.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage(RUN, "2.5", "completed")
    out = moves_of(repo)
    assert out["pipeline_state"] == "awaiting_confirmation"
    (confirm,) = find(out, "confirm")
    assert confirm["args"] == ["response"] and confirm["allowed"]["response"] == ["continue", "review"]
    assert confirm["leads_to"] == {"current_stage": "3", "pipeline_state": "running"}
    assert not find(out, "observe", stage="2.5")  # never at a MANDATORY checkpoint
    text = cli("next", RUN, cwd=repo).stdout
    assert "statedir confirm r1 --response continue|review" in text and "-> stage 3, running" in text


@pytest.mark.slow  # a whole run to its last checkpoint
def test_after_a_pass_with_an_open_issue_final_integrity_is_checked_again(repo: Path,
                                                                          at_final_integrity: api.StateDir) -> None:
    """The dead end of the issue: PASS_WITH_NOTES with an open issue (or PASS with 2 found, 1
    fixed) at 4.5. Stage 4.5 does not complete; `next` lists the re-check and says what
    completing needs."""
    sd = at_final_integrity
    sd.integrity(RUN, "4.5", "PASS", refs_total=1, refs_verified=1, issues_found=2, issues_fixed=1, actor=INTEGRITY)
    out = moves_of(repo)
    assert out["current_stage"] == "4.5" and out["pipeline_state"] == "running"
    assert find(out, "integrity", stage="4.5", verdict="PASS")
    assert not find(out, "stage", stage="4.5", status="completed") and not find(out, "confirm")
    (entry,) = [e for e in out["blocked"] if e["move"]["command"] == "stage"]
    assert entry["move"]["allowed"] == {"stage": ["4.5"], "status": ["completed"]}
    assert "PASS verdict with zero open issues" in entry["needs"][0]
    code, refusal = cli_json("stage", RUN, "4.5", "completed", cwd=repo)
    assert code == 1 and refusal["error"]["details"]["moves"] == out["moves"]  # type: ignore[index]
    sd.integrity(RUN, "4.5", "PASS", refs_total=1, refs_verified=1, issues_found=2, issues_fixed=2, actor=INTEGRITY)
    sd.checklist(RUN, "4.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage(RUN, "4.5", "completed")
    assert find(moves_of(repo), "confirm")[0]["leads_to"]["current_stage"] == "5"


def test_where_no_move_leads_on_the_checks_verdict_is_the_likely_one(sd: api.StateDir, repo: Path) -> None:
    """Stage 2.5 in progress without a verdict: nothing legal moves the run yet; the integrity check
    of the stage is what it waits for, so it comes first, marked likely (CLI and JSON alike)."""
    to_integrity(sd, RUN)
    out = moves_of(repo)
    first = out["moves"][0]
    assert (first["command"], first["allowed"]["stage"], first.get("likely")) == ("integrity", ["2.5"], True), first
    assert [m for m in out["moves"] if m.get("likely")] == [first]
    listed = cli("next", RUN, cwd=repo).stdout.splitlines()
    assert "statedir integrity" in listed[2] and listed[2].endswith("(likely next)"), listed[:4]


def test_an_integrity_move_says_which_verdicts_let_its_stage_complete(repo: Path,
                                                                      at_final_integrity: api.StateDir) -> None:
    """Stage 4.5 lists PASS, PASS_WITH_NOTES and FAIL, but completes only on a PASS with no open
    issue: the move's note says so, from the template's completion conditions, and a recorded
    verdict that cannot lead on comes back with a warning (one that can, without)."""
    sd = at_final_integrity
    [move] = find(moves_of(repo), "integrity", stage="4.5")
    assert move["allowed"]["verdict"] == ["PASS", "PASS_WITH_NOTES", "FAIL"]
    assert move["note"] == "stage 4.5 completes only with verdict in PASS or fail_loop_decision in continue_unverified; issues_open = 0 or fail_loop_decision in continue_unverified"
    assert "note: stage 4.5 completes only with verdict in PASS" in cli("next", RUN, cwd=repo).stdout
    noted = sd.integrity(RUN, "4.5", "PASS_WITH_NOTES", refs_total=1, refs_verified=1, issues=["minor:style:x"],
                         actor=INTEGRITY)
    assert noted["commit"] and noted["warning"] == (
        "stage 4.5 cannot complete on this record: it completes only with "
        "verdict in PASS or fail_loop_decision in continue_unverified; issues_open = 0 or fail_loop_decision in continue_unverified")
    passed = sd.integrity(RUN, "4.5", "PASS", refs_total=1, refs_verified=1, actor=INTEGRITY)
    assert "warning" not in passed
    sd.checklist(RUN, "4.5", CLEAR_ITEMS, actor="integrity_verification")
    sd.stage(RUN, "4.5", "completed")


def test_every_refusal_carries_the_moves_next_lists(sd: api.StateDir, repo: Path) -> None:
    past_stage_one(sd, RUN, "t")
    listed = moves_of(repo)["moves"]
    for args in (["confirm", RUN], ["stage", RUN, "3", "in_progress"], ["integrity", RUN, "2.5", "PASS",
                                                                        "--refs-total", "1", "--refs-verified", "1"],
                 ["stage", RUN, "2", "completed", "--actor", "deep-research"]):
        code, out = cli_json(*args, cwd=repo)
        assert code == 1, (args, out)
        assert out["error"]["details"]["moves"] == listed, args  # type: ignore[index]
    sd.pipeline(RUN, "aborted", reason="abandoned")
    code, out = cli_json("stage", RUN, "2", "completed", cwd=repo)
    assert out["error"]["code"] == "RUN_TERMINAL" and out["error"]["details"]["moves"] == []  # type: ignore[index]
    assert moves_of(repo)["moves"] == []
    assert "no legal move: the run has ended" in cli("next", RUN, cwd=repo).stdout


def test_an_unknown_run_is_bad_input_and_the_mcp_tool_only_reads(sd: api.StateDir, repo: Path) -> None:
    code, out = cli_json("next", "nope", cwd=repo)
    assert code == 2 and out["error"]["code"] == "UNKNOWN_RUN"  # type: ignore[index]
    from statedir.cli.registry import command_table
    from statedir.mcp.tools import tools

    tool = tools(command_table())["next"]
    assert tool.read_only and tool.input_schema["required"] == ["run_id"]


# --- a whole run, taking only listed moves ---------------------------------------------------------
def _take(sd: api.StateDir, move: dict[str, Any], values: dict[str, Any], issues: tuple[int, int]) -> None:
    command, actor = move["command"], move["actor"]
    if command == "stage":
        sd.stage(RUN, values["stage"], values["status"], decision=values.get("decision"),
                 reason=values.get("reason"), actor=actor)
    elif command == "confirm":
        sd.confirm(RUN, next=values.get("next"), response=values.get("response"), format=values.get("format"),
                   actor=actor)
    elif command == "integrity":
        sd.integrity(RUN, values["stage"], values["verdict"], refs_total=values["refs_total"],
                     refs_verified=values["refs_verified"], issues_found=issues[0], issues_fixed=issues[1],
                     reason=values.get("reason"), actor=actor)
    elif command == "revision":
        sd.revision(RUN, items_total=values["items_total"], items_addressed=values["items_total"], actor=actor)
    elif command == "material":
        sd.material(RUN, [values["names"]], actor=actor)
    elif command == "checklist":
        sd.checklist(RUN, values["stage"], values["item"], actor=actor)
    else:  # pragma: no cover - the driver prefers nothing else
        raise AssertionError(command)


@pytest.mark.parametrize("taste", [
    {"decision": ["accept"], "verdict": ["PASS"], "response": ["continue"]},
    pytest.param({"decision": ["major_revision"], "verdict": ["PASS_WITH_NOTES", "PASS"], "response": ["review"],
                  "next": ["completed"]}, marks=pytest.mark.slow),  # two revision rounds: the long way round
], ids=["accept-at-review", "two-revisions-notes-at-integrity"])
def test_a_whole_run_reaches_completed_taking_only_listed_moves(sd: api.StateDir, taste: dict[str, list[str]]) -> None:
    """Each step: ask `next`, take a listed move (the driver's preference among them), or where
    nothing it prefers is listed, register what a blocked move names. A PASS_WITH_NOTES leaves
    an issue open: stage 4.5 is then not listed as completable, and the re-check leads on."""
    sd.new(RUN, topic="t")
    checks: dict[str, int] = {}
    taken = []
    for _ in range(120):
        out = sd.next(RUN)
        assert_pruned_answers_alike(sd, out)
        if out["pipeline_state"] == "completed":
            break
        move = pick(out["moves"], taste)
        if move is None:  # the re-review contract part by part, then its check; else what a blocked move needs
            steps = fill_in(out)
            assert steps, out
            for step in steps:
                if step["command"] == "contract":
                    path = sd.store.files_worktree / f"contract-{step['part']}.md"
                    path.write_text(f"{step['part']}\n")
                    sd.contract(RUN, step["stage"], step["part"], file=str(path), exit_code=step["exit_code"],
                                actor=step["actor"])
                    taken.append(("contract", step["part"]))
                else:
                    _take(sd, step, {"names": step["names"]}, (0, 0))
                    taken.append(("material", step["names"]))
            continue
        values = choose(move, taste)
        issues = (0, 0)
        if move["command"] == "integrity":
            seen = checks[values["stage"]] = checks.get(values["stage"], 0) + 1
            verdicts = [v for v in taste["verdict"] if v in move["allowed"]["verdict"]]
            values["verdict"] = verdicts[min(seen, len(verdicts)) - 1]
            issues = (1, 0) if values["verdict"] == "PASS_WITH_NOTES" else (0, 0)
        _take(sd, move, values, issues)
        taken.append((move["command"], values.get("stage") or values.get("next")))
    else:
        raise AssertionError(f"the run did not end: {taken}")
    assert sd.get(RUN, "pipeline_state") == "completed"
    if "PASS_WITH_NOTES" in taste["verdict"]:
        assert checks == {"2.5": 1, "4.5": 2}  # 4.5's open issue was checked again before it completed
        assert ("stage", "4p") in taken and sd.get(RUN, "stages.6.status") == "skipped"
    else:
        assert sd.get(RUN, "stages.4.status") == "skipped" and sd.get(RUN, "stages.6.status") == "completed"


def assert_pruned_answers_alike(sd: api.StateDir, out: dict[str, Any]) -> None:
    """`next` asks fewer requests than every one (it leaves out what the rules' data refuses
    without a need) and answers as asking every one would."""
    t, run, _ = sd.load(RUN, ledger=True)
    every = next_moves.moves(t, run, "2026-01-01T00:00:00Z", pruned=False)
    assert every == {k: v for k, v in out.items() if k != "rules"}
    assert len(next_moves.candidates(t, run)) < len(next_moves.candidates(t, run, pruned=False))


def test_a_finished_run_asks_the_rules_nothing(sd: api.StateDir) -> None:
    """Of a run that ended the rules refuse every move `next` could ask about, needing nothing:
    it tries none, and answers as trying each would."""
    sd.new(RUN, topic="t")
    sd.pipeline(RUN, "aborted", reason="the user stopped it")
    t, run, _ = sd.load(RUN, ledger=True)
    assert next_moves.candidates(t, run) == [] and len(next_moves.candidates(t, run, pruned=False)) > 100
    assert next_moves.moves(t, run, "2026-01-01T00:00:00Z", pruned=False) == sd.next(RUN)
    assert sd.next(RUN)["moves"] == [] and sd.next(RUN)["blocked"] == []


def test_a_refused_trial_words_no_message(sd: api.StateDir) -> None:
    """`next` (and the flow check) try hundreds of requests the rules refuse and read only the
    refusals' codes and details: none of their messages is worded until read."""
    sd.new(RUN, topic="t")
    t, run, _ = sd.load(RUN, ledger=True)
    refused = [c for c in next_moves.candidates(t, run, pruned=False) if c.command in ("confirm", "integrity")]
    with counted_words() as words:
        answers = [next_moves.trial(t, run, c, "2026-01-01T00:00:00Z") for c in refused]
    assert len(answers) > 10 and all(change is None and refusal is not None for change, refusal in answers)
    assert words.worded == []
    assert "no checkpoint is open" in str(answers[0][1]) and len(words.worded) == 1

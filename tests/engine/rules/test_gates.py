"""The integrity gates of academic-pipeline 3.22 (seed 002's IRON RULE): the user's FAIL-loop
resolution after the retry cap and the override ladder, on plain data and through the real CLI."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api, errors
from tests.support.sim import INTEGRITY, ORCH, Sim
from tests.support.util import CLEAR_ARGS, cli, cli_json, copy_of, snapshot, to_integrity

RUN = "g1"
ISSUE = {"severity": "high", "type": "citation", "description": "ref 7 not found"}
LONG = "The user read every open item, checked the sources by hand and accepts going on with the draft " \
       "marked partially unverified."


def refused(sim: Sim, code: str, action: str, actor: str = ORCH, reason: str | None = None, **args: object) -> str:
    with pytest.raises(errors.StatedirError) as info:
        sim.do(action, actor=actor, reason=reason, **args)
    assert info.value.code == code, info.value.message
    return info.value.message


def fails(sim: Sim, rounds: int, stage: str = "2.5") -> None:
    for _ in range(rounds):
        sim.do("integrity", actor=INTEGRITY, stage=stage, verdict="FAIL", refs_total=10, refs_verified=8,
               issues=[ISSUE])


def at_final(sim: Sim) -> None:
    sim.research()
    sim.write()
    sim.integrity_pass("2.5")
    sim.do("confirm", response="continue")
    sim.review("accept")
    sim.do("confirm", response="continue")


# --- on plain data ------------------------------------------------------------------------------
def test_a_resolution_comes_only_after_the_cap_and_is_one_of_three() -> None:
    sim = Sim()
    sim.research()
    sim.write()
    fails(sim, 2)
    assert "only after the cap" in refused(sim, "ILLEGAL_TRANSITION", "resolve", actor="user", stage="2.5",
                                           decision="continue_unverified")
    fails(sim, 1)
    assert "handle_manually, remove_unverifiable, continue_unverified" in refused(
        sim, "INVALID_VALUE", "resolve", actor="user", stage="2.5", decision="continue with a warning")
    assert refused(sim, "INVALID_VALUE", "resolve", actor="user", stage="3", decision="handle_manually")
    for role in (INTEGRITY, "collaboration_depth_agent", "academic-paper"):  # never the agents' answer
        refused(sim, "PERMISSION_DENIED", "resolve", actor=role, stage="2.5", decision="continue_unverified")
    refused(sim, "LIMIT_REACHED", "integrity", actor=INTEGRITY, reason="continue partially unverified",
            stage="2.5", verdict="PASS", refs_total=10, refs_verified=10)  # --reason is no decision any more


def test_continue_unverified_carries_the_stage_on_with_its_items_marked() -> None:
    sim = Sim()
    sim.research()
    sim.write()
    fails(sim, 3)
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="2.5", status="completed")
    change = sim.do("resolve", actor="user", stage="2.5", decision="continue_unverified", answered_by="user")
    assert change.result["unresolved_items"] == [ISSUE] and change.result["override_round"] == 1
    record = sim.run.stages["2.5"]
    assert record["partially_unverified"] is True and record["unresolved_items"] == [ISSUE]
    entry = sim.logs["integrity"][-1]
    assert entry["event"] == "resolution" and entry["decision"] == "continue_unverified"
    assert entry["unresolved_items"] == [ISSUE] and entry["answered_by"] == "user" and "via" not in entry
    draft = sim.run.passports[sim.state["current_version"]["paper_draft"]]
    assert draft["verification_status"] == "UNVERIFIED" and draft["partially_unverified"] is True
    assert draft["unresolved_items"] == [ISSUE] and sim.state["materials"]["verified_paper_draft"] is True
    refused(sim, "LIMIT_REACHED", "integrity", actor=INTEGRITY, stage="2.5", verdict="FAIL", refs_total=1,
            refs_verified=0)
    refused(sim, "ILLEGAL_TRANSITION", "resolve", actor="user", stage="2.5", decision="handle_manually")
    sim.checklist("2.5")
    sim.do("stage", stage="2.5", status="completed")
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "3"


def test_handle_manually_lifts_the_cap_by_one_round_and_the_ladder_climbs() -> None:
    sim = Sim()
    sim.research()
    sim.write()
    fails(sim, 3)
    change = sim.do("resolve", actor=ORCH, stage="2.5", decision="handle_manually", answered_by="user")
    assert sim.logs["integrity"][-1]["via"] == ORCH  # relayed by the orchestrator, the user's answer
    assert "one more check" in change.summary and sim.run.stages["2.5"]["partially_unverified"] is False
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="2.5", status="completed")
    fails(sim, 1)  # the one more round, failed too
    refused(sim, "LIMIT_REACHED", "integrity", actor=INTEGRITY, stage="2.5", verdict="PASS", refs_total=1,
            refs_verified=1)
    assert "round 2" in refused(sim, "INVALID_VALUE", "resolve", actor="user", stage="2.5",
                                decision="remove_unverifiable")
    sim.do("resolve", actor="user", reason="removed two claims", stage="2.5", decision="remove_unverifiable")
    fails(sim, 1)
    message = refused(sim, "INVALID_VALUE", "resolve", actor="user", reason="still sure", stage="2.5",
                      decision="continue_unverified")
    assert "round 3" in message and "at least 100 characters" in message
    sim.do("resolve", actor="user", reason=LONG, stage="2.5", decision="continue_unverified")
    assert sim.state["override_rounds"] == {"2.5": 3}


def test_final_integrity_passes_to_five_only_on_a_clean_pass_or_the_users_decision() -> None:
    sim = Sim()
    at_final(sim)
    sim.do("integrity", actor=INTEGRITY, stage="4.5", verdict="PASS_WITH_NOTES", refs_total=10, refs_verified=10,
           issues=[ISSUE])
    refused(sim, "ILLEGAL_TRANSITION", "stage", stage="4.5", status="completed")  # PASS_WITH_NOTES: never
    fails(sim, 3, "4.5")
    sim.do("resolve", actor="user", stage="4.5", decision="continue_unverified")
    sim.checklist("4.5")
    sim.do("stage", stage="4.5", status="completed")
    sim.do("confirm", response="continue", format="apa7")
    assert sim.state["current_stage"] == "5" and sim.run.stages["4.5"]["unresolved_items"] == [ISSUE]


def test_the_old_template_keeps_its_free_text_decision() -> None:
    from tests.support.runs import OLD_ACADEMIC

    sim = Sim(OLD_ACADEMIC)
    sim.research()
    sim.write()
    fails(sim, 3)
    refused(sim, "PERMISSION_DENIED", "resolve", actor=ORCH, stage="2.5", decision="continue_unverified")
    sim.do("stage", stage="2.5", status="completed", reason="continue with 'partially unverified' warning")
    assert "partially_unverified" not in sim.run.stages["2.5"]


# --- through the CLI ----------------------------------------------------------------------------
def _failed_thrice(sd: api.StateDir, stage: str = "4.5") -> None:
    to_integrity(sd, RUN, stage)
    for _ in range(3):
        sd.integrity(RUN, stage, "FAIL", refs_total=4, refs_verified=2, issues=["high:citation:ref 7 not found"],
                     actor=INTEGRITY)


@pytest.fixture
def failed_final(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    """Stage 4.5 failed three rounds (the cap): made once per process and copied."""
    return copy_of("gates-failed-4.5", _failed_thrice, repo, tmp_path_factory)[0]


def test_the_users_decision_takes_a_thrice_failed_run_to_stage_five(repo: Path, failed_final: api.StateDir) -> None:
    before = snapshot(repo)
    for args, code, exit_code in [(["continue"], "INVALID_VALUE", 2), (["--reason", "x"], "INVALID_VALUE", 2)]:
        rc, out = cli_json("resolve", RUN, "4.5", *args, cwd=repo)
        assert rc == exit_code and out["error"]["code"] == code  # type: ignore[index]
    rc, out = cli_json("resolve", RUN, "4.5", "continue_unverified", cwd=repo,
                       env={"STATEDIR_ACTOR": "integrity_verification"})
    assert rc == 1 and out["error"]["code"] == "PERMISSION_DENIED"  # type: ignore[index]
    assert snapshot(repo) == before  # each refusal left the store byte-identical
    rc, out = cli_json("resolve", RUN, "4.5", "continue_unverified", "--actor", "user", cwd=repo)
    assert rc == 0 and out["unresolved_items"] == [ISSUE], out  # type: ignore[index]
    assert cli("checklist", RUN, "4.5", *CLEAR_ARGS, "--actor", "integrity_verification", cwd=repo).returncode == 0
    assert cli("stage", RUN, "4.5", "completed", cwd=repo).returncode == 0
    assert cli("confirm", RUN, "--response", "continue", "--format", "apa7", cwd=repo).returncode == 0
    assert cli_json("get", RUN, "current_stage", cwd=repo)[1] == "5"
    dashboard = cli("status", RUN, cwd=repo).stdout
    assert "FAIL (2/4 refs verified), retry 3, partially unverified (1 unresolved item)" in dashboard
    ars = cli_json("show", RUN, "--format", "ars", cwd=repo)[1]
    assert ars["stages"]["4.5"]["partially_unverified"] is True  # type: ignore[index]
    [resolution] = ars["fail_loop_resolutions"]  # type: ignore[index]
    assert resolution["decision"] == "continue_unverified" and resolution["unresolved_items"] == [ISSUE]
    assert resolution["answered_by"] == "user"
    assert failed_final.verify()["clean"]


def test_next_names_the_resolution_at_the_cap(repo: Path, failed_final: api.StateDir) -> None:
    out = cli("next", RUN, cwd=repo).stdout
    assert "statedir resolve g1 4.5 handle_manually|remove_unverifiable|continue_unverified" in out
    assert "needs: the user's FAIL-loop resolution (statedir resolve)" in out


def test_verify_refuses_a_forged_resolution_before_the_cap(repo: Path, sd: api.StateDir) -> None:
    """A commit that records `resolve` on a run whose stage has not used its rounds: replayed by the
    rules, it is refused there, so verify calls it illegal."""
    import json
    import subprocess

    _failed_thrice(sd, "2.5")
    forged = sd.resolve(RUN, "2.5", "continue_unverified", actor="user")
    # history rewritten: the resolution's own tree and message, made on the run with one FAIL round fewer
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()

    message = git("log", "-1", "--format=%B", forged["commit"])
    assert "Statedir-Action: resolve" in message
    two_fails = git("rev-parse", f"{forged['commit']}~2")
    made = git("commit-tree", f"{forged['commit']}^{{tree}}", "-p", two_fails, "-m", message)
    git("reset", "-q", "--hard", made)
    found = json.loads(cli("verify", "--json", cwd=repo).stdout)
    assert not found["clean"]
    assert any(f["kind"] == "illegal" and "only after the cap" in f["message"] for f in found["findings"]), found


# --- older stores ---------------------------------------------------------------------------------
def test_a_run_made_on_the_older_rules_keeps_them_and_says_so(isolated: Path) -> None:
    """The legacy store's run p1 was made on academic-pipeline 3.21: it verifies, moves by 3.21's
    rules, and `status` and `next` say so."""
    import subprocess

    from tests.support.util import FIXTURES

    repo = isolated / "legacy"
    subprocess.run(["git", "clone", "-q", str(FIXTURES / "legacy-store.bundle"), str(repo)], check=True)
    assert cli_json("verify", cwd=repo)[1]["clean"]  # type: ignore[index]
    for command in ("status", "next"):
        code, out = cli_json(command, "p1", cwd=repo)
        assert code == 0 and "academic-pipeline 3.21, the older rules" in out["rules"], out  # type: ignore[index]
        assert "older rules" in cli(command, "p1", cwd=repo).stdout
    assert "rules" not in cli_json("status", "r2", cwd=repo)[1]  # type: ignore[operator]
    code, out = cli_json("new", "fresh", "--topic", "t", cwd=repo)
    assert code == 0 and "rules" not in cli_json("next", "fresh", cwd=repo)[1]  # type: ignore[operator]
    assert cli_json("get", "fresh", "template_version", cwd=repo)[1] == "3.24"
    assert cli("stage", "p1", "2", "completed", cwd=repo).returncode == 0
    assert cli_json("verify", cwd=repo)[1]["clean"]  # type: ignore[index]


def test_no_caller_acts_as_statedir_itself(repo: Path, failed_final: api.StateDir) -> None:
    before = snapshot(repo)
    for args in (["integrity", RUN, "4.5", "PASS", "--refs-total", "1", "--refs-verified", "1"],
                 ["resolve", RUN, "4.5", "continue_unverified"], ["new", "other", "--topic", "t"]):
        code, out = cli_json(*args, cwd=repo, env={"STATEDIR_ACTOR": "state_tracker"})
        message = out["error"]["message"]  # type: ignore[index]
        assert code == 1 and out["error"]["code"] == "PERMISSION_DENIED", out  # type: ignore[index]
        assert "statedir itself" in message and "pipeline_orchestrator, integrity_verification" in message
    with pytest.raises(errors.PermissionDenied):
        failed_final.resolve(RUN, "4.5", "continue_unverified", actor="state_tracker")
    assert snapshot(repo) == before


# --- mechanics ------------------------------------------------------------------------------------
@pytest.mark.parametrize("word", ["done", "finish", "end", "confirm"])
def test_every_terminal_acknowledgement_word_ends_the_run(word: str) -> None:
    from tests.support.runs import finish_to_five

    sim = Sim()
    finish_to_five(sim)
    sim.do("confirm", response="continue")
    assert sim.state["current_stage"] == "6"
    assert "done, finish, end, confirm" in refused(sim, "INVALID_VALUE", "confirm", response="bye")
    sim.do("confirm", response=word)
    assert sim.status("6") == "completed" and sim.state["pipeline_state"] == "completed"


def test_a_stage_ahead_cannot_be_skipped_by_hand() -> None:
    sim = Sim()
    sim.to_review()
    for stage in ("4", "5"):
        assert "stage graph" in refused(sim, "ILLEGAL_TRANSITION", "stage", stage=stage, status="skipped", reason="x")
    sim.review("minor_revision")
    sim.do("confirm", response="continue")
    assert sim.status("4") == "in_progress"


def test_mid_entry_compares_the_passports_hash_with_the_file_brought(repo: Path, sd: api.StateDir) -> None:
    import hashlib
    import json

    draft = repo / "draft.md"
    draft.write_text("the verified draft\n")
    passport = {"version_label": "paper_draft_v2", "series": "paper_draft", "materials": ["paper_draft"],
                "origin_skill": "academic-paper", "origin_mode": None, "origin_date": "2026-12-01T00:00:00Z",
                "verification_status": "VERIFIED", "files": [],
                "content_hash": hashlib.sha256(draft.read_bytes()).hexdigest(),
                "integrity_pass_date": __import__("time").strftime("%Y-%m-%dT%H:%M:%SZ", __import__("time").gmtime()),
                "upstream_dependencies": [], "repro_lock": None}
    (repo / "passport.json").write_text(json.dumps(passport))
    enter = ["new", "m1", "--topic", "t", "--entry-point", "3", "--passport", "passport.json", "--confirm-skip"]
    rc, out = cli_json(*enter, cwd=repo)
    assert rc == 1 and "--file" in out["error"]["message"]  # type: ignore[index]
    (repo / "other.md").write_text("an edited draft\n")
    before = snapshot(repo)
    rc, out = cli_json(*enter, "--file", "other.md", cwd=repo)
    assert rc == 1 and out["error"]["code"] == "CONTENT_CHANGED", out  # type: ignore[index]
    assert snapshot(repo) == before
    rc, out = cli_json(*enter, "--file", "draft.md", cwd=repo)
    assert rc == 0, out
    assert cli("stage", "m1", "3", "in_progress", cwd=repo).returncode == 0  # the entry stage starts at once
    assert sd.verify()["clean"]

"""Who made each transition (statedir.engine.attribution): the role in `Statedir-Actor`, and where
the answer is the user's (a MANDATORY checkpoint, anything `--actor user` does) the user's answer,
`Statedir-Answered-By: user` with its channel, via the agent that carried it; `log`, `show`, the
ARS export and verify all read it so. Real git, the real CLI as a subprocess."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from statedir.engine import attribution
from statedir.engine.template import load
from statedir.engine.transition_data import Request
from statedir.errors import InvalidValue, PermissionDenied
from tests.support.util import at_mandatory_2_5, cli, cli_json, copy_of, snapshot, trailers


@pytest.fixture
def store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run p with stage 2.5's MANDATORY checkpoint open."""
    copy_of("mandatory-2.5-open", at_mandatory_2_5, repo, tmp_path_factory)
    return repo / "state"


def test_the_agents_relay_of_a_mandatory_answer_is_the_users_via_the_agent(store: Path, repo: Path) -> None:
    code, out = cli_json("confirm", "p", "--response", "continue", cwd=repo)
    assert code == 0, out
    said = trailers(repo)
    assert (said["Statedir-Actor"], said["Statedir-Answered-By"], said["Statedir-Channel"], said["Statedir-Via"]) == (
        "user", "user", "cli", "pipeline_orchestrator")
    code, log = cli_json("log", "p", "--limit", "1", cwd=repo)
    [entry] = log  # type: ignore[misc]
    assert (entry["actor"], entry["via"], entry["by"]) == ("user", "pipeline_orchestrator",
                                                           "user via pipeline_orchestrator (cli)")
    assert "user via pipeline_orchestrator (cli)" in cli("log", "p", cwd=repo).stdout
    code, shown = cli_json("show", "p", cwd=repo)
    last = shown["history"]["transitions"][-1]  # type: ignore[index]
    assert {k: last[k] for k in ("actor", "answered_by", "via", "channel")} == {
        "actor": "user", "answered_by": "user", "via": "pipeline_orchestrator", "channel": "cli"}
    assert shown["history"]["checkpoints"][-1]["answered_by"] == "user"  # type: ignore[index]
    code, ars = cli_json("show", "p", "--format", "ars", cwd=repo)
    assert ars["transition_history"][-1]["via"] == "pipeline_orchestrator"  # type: ignore[index]
    assert cli_json("verify", cwd=repo)[1]["clean"]  # type: ignore[index]


def test_the_user_at_the_terminal_answers_as_the_user(store: Path, repo: Path) -> None:
    code, out = cli_json("confirm", "p", "--response", "review", "--actor", "user", cwd=repo)
    assert code == 0, out
    said = trailers(repo)
    assert (said["Statedir-Actor"], said["Statedir-Answered-By"], said["Statedir-Channel"]) == ("user", "user", "cli")
    assert "Statedir-Via" not in said
    assert cli_json("verify", cwd=repo)[1]["clean"]  # type: ignore[index]


def test_an_agents_own_work_names_no_answer(store: Path, repo: Path) -> None:
    said = trailers(repo)  # `stage 2.5 completed`: the orchestrator's own
    assert said["Statedir-Actor"] == "pipeline_orchestrator" and "Statedir-Answered-By" not in said


def test_a_role_that_may_not_answer_may_not_relay_the_users_answer(store: Path, repo: Path) -> None:
    before = snapshot(repo)
    proc = cli("confirm", "p", "--response", "continue", "--actor", "integrity_verification", "--json", cwd=repo)
    assert proc.returncode == 1 and '"PERMISSION_DENIED"' in proc.stdout
    assert "integrity_verification may not relay the user's answer" in proc.stdout
    assert snapshot(repo) == before


def forge(repo: Path, edit: Any) -> None:
    """HEAD's message rewritten by `edit` (the same tree): what a hand-made commit could claim."""
    text = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout
    subprocess.run(["git", "commit", "-q", "--amend", "--allow-empty", "-F", "-"], cwd=repo, input=edit(text),
                   text=True, check=True)


def _illegal(repo: Path) -> list[str]:
    result = cli_json("verify", cwd=repo)[1]
    return [f["message"] for f in result["findings"] if f["kind"] == "illegal"]  # type: ignore[index]


def test_verify_refuses_an_answer_forged_onto_an_agents_own_transition(store: Path, repo: Path) -> None:
    # `stage 2.5 completed` claimed as the user's answer
    forge(repo, lambda text: text.replace("Statedir-Actor: pipeline_orchestrator\n",
                                          "Statedir-Actor: user\nStatedir-Answered-By: user\nStatedir-Channel: cli\n"))
    [message] = _illegal(repo)
    assert "user may not update stages" in message


def test_verify_refuses_a_relay_by_a_role_that_may_not_carry_it(store: Path, repo: Path) -> None:
    assert cli_json("confirm", "p", "--response", "continue", cwd=repo)[0] == 0
    forge(repo, lambda text: text.replace("Statedir-Via: pipeline_orchestrator", "Statedir-Via: integrity_verification"))
    [message] = _illegal(repo)
    assert "integrity_verification may not relay the user's answer" in message


@pytest.mark.parametrize("extra", ["Statedir-Channel: cli\n", "Statedir-Via: pipeline_orchestrator\n"])
def test_verify_refuses_a_channel_or_via_without_the_users_answer(store: Path, repo: Path, extra: str) -> None:
    forge(repo, lambda text: text.replace("Statedir-Action: stage\n", f"Statedir-Action: stage\n{extra}"))
    assert any("only with answered_by user" in m for m in _illegal(repo))


def test_verify_refuses_an_answer_recorded_as_the_agents(store: Path, repo: Path) -> None:
    assert cli_json("confirm", "p", "--response", "continue", cwd=repo)[0] == 0
    forge(repo, lambda text: text.replace("Statedir-Actor: user", "Statedir-Actor: pipeline_orchestrator"))
    assert any("recorded as the user's" in m for m in _illegal(repo))


# --- the pure rules -------------------------------------------------------------------------------
def test_users_answer_is_the_one_function_the_users_commands_share() -> None:
    """`resolve` and `acknowledge` are the user's whoever carries them: one call makes them so."""
    t = load("academic-pipeline")
    from statedir.engine.transition_data import RunData

    run = RunData("r", {"pipeline_state": "running", "checkpoint": None}, {})
    orchestrator_may = {**t.doc, "roles": {**t.roles, "pipeline_orchestrator": {
        "may": [*t.roles["pipeline_orchestrator"]["may"], "resolve"]}, "user": {"may": ["confirm", "resolve"]}}}
    from statedir.engine.template import Template

    widened = Template(orchestrator_may, t.source)
    req = attribution.users_answer(widened, run, Request("resolve", "pipeline_orchestrator", {"decision": "x"}))
    assert (req.actor, req.who) == ("user", {"answered_by": "user", "channel": "cli", "via": "pipeline_orchestrator"})
    with pytest.raises(PermissionDenied, match="collaboration_depth_agent may not relay"):
        attribution.users_answer(widened, run, Request("resolve", "collaboration_depth_agent", {}))
    own = Request("stage", "pipeline_orchestrator", {})
    assert attribution.users_answer(t, run, own) is own


@pytest.mark.parametrize("who", [{"answered_by": "someone"}, {"answered_by": "user", "channel": "fax"},
                                 {"channel": "cli"}, {"via": "pipeline_orchestrator"}, {"client": "x"}])
def test_check_refuses_an_identity_the_rules_do_not_allow(who: dict[str, str]) -> None:
    with pytest.raises(InvalidValue):
        attribution.check(load("academic-pipeline"), Request("confirm", "user", {}, who=who))


def test_a_confirm_is_the_users_answer_only_where_the_user_is_asked() -> None:
    """users_checkpoint: an open MANDATORY checkpoint, or one held until the user answers; a
    confirm there is the user's answer, elsewhere the agent's own."""
    from statedir.engine.transition_data import RunData

    t = load("academic-pipeline")
    awaiting, running = t.pipeline["awaiting"], t.pipeline["running"]
    mandatory = {"stage": "2.5", "type": "MANDATORY", "choices": ["3"]}
    slim = {**mandatory, "type": "SLIM"}
    asked = [RunData("r", {"pipeline_state": awaiting, "checkpoint": mandatory}, {}),
             RunData("r", {"pipeline_state": t.pipeline["paused"], "checkpoint": {**slim, "held": "regressed"}}, {})]
    not_asked = [RunData("r", {"pipeline_state": awaiting, "checkpoint": slim}, {}),
                 RunData("r", {"pipeline_state": running, "checkpoint": mandatory}, {}),
                 RunData("r", {"pipeline_state": awaiting, "checkpoint": None}, {})]
    confirm = Request("confirm", "pipeline_orchestrator", {})
    assert [attribution.users_checkpoint(t, run) for run in asked] == [run.state["checkpoint"] for run in asked]
    assert [attribution.users_checkpoint(t, run) for run in not_asked] == [None, None, None]
    assert [attribution.is_users_answer(t, run, confirm) for run in [*asked, *not_asked]] == [True, True] + [False] * 3

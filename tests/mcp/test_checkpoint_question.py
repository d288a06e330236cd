"""A MANDATORY checkpoint is the user's: over MCP, `confirm` there asks the user through the
client's elicitation form (an input-required result from protocol 2026-07-28, an elicitation
request mid-call before it: the SDK's client in its default and its legacy mode) and records
`answered_by: user`; a declined or cancelled question, or a client that cannot ask, changes nothing."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from statedir import api
from statedir.gitops import git
from tests.support.mcp_session import ToolError, User, agent
from tests.support.util import CLEAR_ITEMS, at_mandatory_2_5, copy_of, snapshot, stage_one_done, trailers

MODES = ["auto", "legacy"]


@pytest.fixture
def store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run p with stage 2.5's MANDATORY checkpoint open: made once per process and copied."""
    copy_of("mandatory-2.5-open", at_mandatory_2_5, repo, tmp_path_factory)
    return repo / "state"


def answered(store: Path) -> list[dict[str, Any]]:
    return [e for e in api.StateDir(store).histories("p")["checkpoints"] if e["event"] == "answered"]


@pytest.mark.parametrize("mode", MODES)
def test_the_user_is_asked_and_their_answer_recorded(store: Path, repo: Path, mode: str) -> None:
    user = User(response="review")  # the agent proposes continue; the user's answer is what counts

    async def main() -> dict[str, Any]:
        async with agent(store, mode, user) as a:
            return await a("confirm", run_id="p", response="continue")  # type: ignore[no-any-return]

    done = anyio.run(main)
    assert done["commit"] == git.head(repo) and done["next"] == "3"
    [asked] = user.asked
    assert "MANDATORY" in asked.message and "yours to answer" in asked.message and "3 REVIEW" in asked.message
    fields = asked.requested_schema["properties"]
    assert fields["response"]["enum"] == ["continue", "review"]
    assert fields["next"]["enum"] == ["3"]
    entry = answered(store)[-1]
    assert (entry["stage"], entry["response"], entry["answered_by"]) == ("2.5", "review", "user")
    # committed as the user's answer, come by elicitation, via the server's role: never as the agent's
    said = subprocess.run(["git", "log", "-1", "--format=%(trailers:only,unfold)"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.splitlines()
    assert {"Statedir-Actor: user", "Statedir-Answered-By: user", "Statedir-Channel: mcp-elicitation",
            "Statedir-Via: pipeline_orchestrator"} <= set(said)
    by = api.StateDir(store).log("p", limit=1)[0]["by"]
    assert by.startswith("user via pipeline_orchestrator (mcp-elicitation, client mcp "), by
    assert api.StateDir(store).verify()["clean"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("proposed", ["review", "continue"])
def test_the_agents_response_never_fills_the_users_form(store: Path, mode: str, proposed: str) -> None:
    user = User(response="continue")

    async def main() -> None:
        async with agent(store, mode, user) as a:
            await a("confirm", run_id="p", response=proposed, next="3")

    anyio.run(main)
    [asked] = user.asked
    fields = asked.requested_schema["properties"]
    assert "default" not in fields["response"] and "response" in asked.requested_schema["required"]
    assert answered(store)[-1]["response"] == "continue"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_question_changes_nothing_and_says_so(store: Path, repo: Path, mode: str, action: str) -> None:
    user = User(action)
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(store, mode, user) as a:
            with pytest.raises(ToolError) as caught:
                await a("confirm", run_id="p", response="continue")
            assert caught.value.code == "USER_DECLINED"
            message = caught.value.doc["error"]["message"]
            assert f"the user {action}" in message and "nothing changed" in message

    anyio.run(main)
    assert len(user.asked) == 1
    assert snapshot(repo) == saved


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_the_form_does_not_take_changes_nothing(store: Path, repo: Path, mode: str) -> None:
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(store, mode, User(response="done")) as a:  # not one of the MANDATORY responses
            with pytest.raises(ToolError) as caught:
                await a("confirm", run_id="p", response="continue")
            assert caught.value.code == "INVALID_VALUE"
            error = caught.value.doc["error"]
            assert "did not fit the checkpoint's form" in error["message"] and "'done'" in error["message"]
            assert "Resolver" not in error["message"] and "statedir.mcp" not in error["message"]
            assert error["details"]["fields"] == {"response": {"given": "done", "allowed": ["continue", "review"]}}

    anyio.run(main)
    assert snapshot(repo) == saved


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_cannot_ask_its_user_is_told_to_ask_them(store: Path, repo: Path, mode: str) -> None:
    saved = snapshot(repo)

    async def main() -> None:
        async with agent(store, mode) as a:  # no elicitation
            with pytest.raises(ToolError) as caught:
                await a("confirm", run_id="p", response="continue")
            assert caught.value.code == "USER_ANSWER_REQUIRED"
            message = caught.value.doc["error"]["message"]
            assert "only the user may answer" in message and "Ask the user" in message
            assert "with response continue or review; do not answer it for them" in message
            assert "statedir confirm" not in message and "--response" not in message

    anyio.run(main)
    assert snapshot(repo) == saved


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_answers_other_checkpoints_itself(repo: Path, sd: api.StateDir, mode: str) -> None:
    sd.new("r", topic="T", template="linear")
    sd.stage("r", "plan", "in_progress")
    sd.stage("r", "plan", "done")  # the first checkpoint: FULL
    user = User()

    async def main() -> None:
        async with agent(repo / "state", mode, user) as a:
            await a("confirm", run_id="r", actor="pipeline_orchestrator")

    anyio.run(main)
    assert not user.asked
    [entry] = [e for e in sd.histories("r")["checkpoints"] if e["event"] == "answered"]
    assert entry["type"] == "FULL" and entry["answered_by"] == "pipeline_orchestrator"


@pytest.mark.parametrize("mode", MODES)
def test_no_question_on_a_run_the_agent_did_not_see(store: Path, repo: Path, mode: str) -> None:
    """A stale expect_head is refused before the user is asked; a commit elsewhere is no reason to."""
    before = git.head(repo)
    api.StateDir(store).set("p", "topic", "U", reason="sharper")  # the run changes after the agent's read
    saved = snapshot(repo)
    user = User()

    async def main() -> None:
        async with agent(store, mode, user) as a:
            with pytest.raises(ToolError) as caught:
                await a("confirm", run_id="p", response="continue", expect_head=before)
            assert caught.value.code == "HEAD_MOVED" and not user.asked
            assert snapshot(repo) == saved
            seen = caught.value.doc["error"]["details"]["head"]
            (repo / "notes.txt").write_text("mine\n")  # the user's own commit, outside the store
            subprocess.run(["git", "add", "notes.txt"], cwd=repo, check=True)
            subprocess.run(["git", "commit", "-qm", "notes"], cwd=repo, check=True)
            await a("confirm", run_id="p", response="continue", expect_head=seen)
            assert len(user.asked) == 1

    anyio.run(main)
    assert answered(store)[-1]["answered_by"] == "user"


def test_an_answer_to_the_run_as_it_was_is_never_written_on_the_run_as_it_is(store: Path, repo: Path) -> None:
    """The run changes while the user reads the question: an elicitation request mid-call (legacy)
    is refused with HEAD_MOVED; with an input-required result the question is asked again."""
    class Meanwhile(User):
        async def __call__(self, context: Any, params: Any) -> Any:
            if not self.asked:  # someone else writes to the run while the user reads
                api.StateDir(store).set("p", "topic", f"U{id(self)}", reason="meanwhile")
            return await super().__call__(context, params)

    async def main(mode: str, user: User) -> Any:
        async with agent(store, mode, user) as a:
            return await a.raw("confirm", run_id="p", response="continue")

    legacy = Meanwhile()
    refused = anyio.run(main, "legacy", legacy)
    assert refused.is_error and '"HEAD_MOVED"' in refused.content[0].text
    assert not answered(store) and len(legacy.asked) == 1
    modern = Meanwhile()
    done = anyio.run(main, "auto", modern)
    assert not done.is_error and len(modern.asked) == 2  # asked again, about the run as it is now
    assert answered(store)[-1]["answered_by"] == "user"


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_that_lost_the_race_says_who_answered_and_with_what(store: Path, mode: str) -> None:
    """Another client answers the checkpoint while the user reads the question: the user's answer is
    refused saying the checkpoint was answered meanwhile, by whom and with what (never a bare
    HEAD_MOVED whose retry meets `no checkpoint is open`), and a retry is told who answered it."""
    class Elsewhere(User):
        async def __call__(self, context: Any, params: Any) -> Any:
            if not self.asked:  # the checkpoint answered from another client while the user reads
                api.StateDir(store).confirm("p", response="review")
            return await super().__call__(context, params)

    async def main() -> tuple[Any, Any]:
        async with agent(store, mode, Elsewhere()) as a:
            return (await a.raw("confirm", run_id="p", response="continue"),
                    await a.raw("confirm", run_id="p", response="continue"))

    refused, retried = anyio.run(main)
    error, again = (json.loads(result.content[0].text)["error"] for result in (refused, retried))
    if mode == "legacy":  # the answer came mid-call, to the question as it was: refused as such
        assert error["code"] == "HEAD_MOVED" and "answered meanwhile" in error["message"], error
        assert "Do not retry" in error["message"] and "(review)" in error["message"], error["message"]
    else:  # the call made again with the answer meets the run as it is: no checkpoint, and who answered it
        assert error["code"] == "ILLEGAL_TRANSITION", error
    for said in (error, again) if mode == "auto" else (again,):
        assert said["code"] == "ILLEGAL_TRANSITION" and "no checkpoint is open" in said["message"]
        assert "the last checkpoint was answered: confirm stage 2.5 -> 3 (review) (by user" in said["message"], said
    assert error["details"]["answered"]["action"] == "confirm" and refused.is_error and retried.is_error
    assert [e["response"] for e in answered(store)] == ["review"]  # the other client's answer, and only it


def at_the_fail_cap(sd: api.StateDir) -> None:
    sd.new("p", topic="T", entry_point="2.5")
    sd.material("p", ["paper_draft"])
    sd.stage("p", "2.5", "in_progress")
    for _ in range(3):
        sd.integrity("p", "2.5", "FAIL", refs_total=2, refs_verified=1, issues=["high:citation:ref 2 not found"],
                     actor="integrity_verification")


@pytest.fixture
def capped(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run p with stage 2.5's three FAIL rounds used up: made once per process and copied."""
    copy_of("fail-cap-2.5", at_the_fail_cap, repo, tmp_path_factory)
    return repo / "state"


@pytest.mark.parametrize("mode", MODES)
def test_a_fail_loop_resolution_is_asked_of_the_user(capped: Path, repo: Path, mode: str) -> None:
    user = User(decision="handle_manually")  # the agent proposes to go on; the user asks for another check

    async def main() -> dict[str, Any]:
        async with agent(capped, mode, user) as a:
            return await a("resolve", run_id="p", stage="2.5", decision="continue_unverified",
                           reason="the agent's own words")  # type: ignore[no-any-return]

    done = anyio.run(main)
    assert done["decision"] == "handle_manually"
    [asked] = user.asked
    assert "ref 2 not found" in asked.message and "yours to decide" in asked.message
    assert asked.requested_schema["properties"]["decision"]["enum"] == [
        "handle_manually", "remove_unverifiable", "continue_unverified"]
    entry = api.StateDir(capped).histories("p")["integrity"][-1]
    assert (entry["decision"], entry["answered_by"], entry["reason"]) == ("handle_manually", "user", None)
    said = trailers(repo)  # the user's answer, come by the server's form (it read `cli` before)
    assert (said["Statedir-Answered-By"], said["Statedir-Channel"]) == ("user", "mcp-elicitation")
    assert api.StateDir(capped).verify()["clean"]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_cannot_ask_cannot_resolve(capped: Path, repo: Path, mode: str) -> None:
    before = snapshot(repo)

    async def main() -> None:
        async with agent(capped, mode) as a:  # no elicitation
            with pytest.raises(ToolError) as caught:
                await a("resolve", run_id="p", stage="2.5", decision="continue_unverified")
            assert caught.value.code == "USER_ANSWER_REQUIRED"

    anyio.run(main)
    assert snapshot(repo) == before


def test_a_server_that_may_not_relay_is_told_which_server_asks(capped: Path, repo: Path) -> None:
    """A server for the integrity agent cannot carry the user's resolution; the refusal named
    `actor user`, which no MCP caller may give, where a server started for the orchestrator asks;
    and it is refused before the user is asked (they were asked, answered, and then refused)."""
    before = snapshot(repo)
    user = User()

    async def main() -> None:
        async with agent(capped, user=user, roles=("integrity_verification",)) as a:
            with pytest.raises(ToolError) as caught:
                await a("resolve", run_id="p", stage="2.5", decision="continue_unverified")
            assert caught.value.code == "PERMISSION_DENIED"
            assert caught.value.doc["error"]["message"].endswith(
                "pipeline_orchestrator may relay it: a server started for that role asks the user"), caught.value
            assert "actor user" not in caught.value.doc["error"]["message"]

    anyio.run(main)
    assert user.asked == []
    assert snapshot(repo) == before


def blocked_at_2_5(sd: api.StateDir) -> None:
    sd.new("p", topic="T", entry_point="2.5")
    sd.material("p", ["paper_draft"])
    sd.stage("p", "2.5", "in_progress")
    sd.integrity("p", "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    sd.checklist("p", "2.5", [*CLEAR_ITEMS[:2], "3=SUSPECTED", *CLEAR_ITEMS[3:]], evidence=["3=table 2 invented"],
                 actor="integrity_verification")


@pytest.fixture
def blocked(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run p at 2.5 with a checklist blocking on mode 3: made once per process and copied."""
    copy_of("checklist-blocked-2.5", blocked_at_2_5, repo, tmp_path_factory)
    return repo / "state"


@pytest.mark.parametrize("mode", MODES)
def test_an_acknowledgement_is_asked_of_the_user(blocked: Path, repo: Path, mode: str) -> None:
    user = User(answer="override", reason="I checked table 2 against the raw data myself")

    async def main() -> dict[str, Any]:
        async with agent(blocked, mode, user) as a:  # the agent proposes revise; the user overrides
            return await a("acknowledge", run_id="p", stage="2.5", mode="3", answer="revise",
                           reason="the agent's own words")  # type: ignore[no-any-return]

    done = anyio.run(main)
    assert done["answer"] == "override" and done["blocking"] == []
    [asked] = user.asked
    assert "table 2 invented" in asked.message and "yours to decide" in asked.message
    assert asked.requested_schema["properties"]["answer"]["enum"] == ["confirm", "override", "revise"]
    entry = api.StateDir(blocked).histories("p")["failure_modes"][-1]
    assert (entry["answer"], entry["answered_by"], entry["reason"]) == (
        "override", "user", "I checked table 2 against the raw data myself")
    said = trailers(repo)
    assert (said["Statedir-Answered-By"], said["Statedir-Channel"]) == ("user", "mcp-elicitation")
    assert api.StateDir(blocked).verify()["clean"]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_cannot_ask_cannot_acknowledge(blocked: Path, repo: Path, mode: str) -> None:
    before = snapshot(repo)

    async def main() -> None:
        async with agent(blocked, mode) as a:  # no elicitation
            with pytest.raises(ToolError) as caught:
                await a("acknowledge", run_id="p", stage="2.5", mode="3", answer="override", reason="r")
            assert caught.value.code == "USER_ANSWER_REQUIRED"

    anyio.run(main)
    assert snapshot(repo) == before


def test_a_held_checkpoint_is_asked_of_the_user(repo: Path, sd: api.StateDir) -> None:
    """A regressed quality holds the FULL checkpoint: over MCP its answer is the user's, as a MANDATORY one's."""
    stage_one_done(sd, "p")
    user = User(response="review")

    async def main() -> dict[str, Any]:
        async with agent(repo / "state", "auto", user) as a:
            held = await a("confirm", run_id="p", quality="regressed", metric=["word_count=3000"])
            assert held["held"] == "regressed" and not user.asked  # recording the dashboard asks no one
            return await a("confirm", run_id="p", response="continue")  # type: ignore[no-any-return]

    done = anyio.run(main)
    [asked] = user.asked
    assert "held (its quality check says regressed" in asked.message and "yours to answer" in asked.message
    assert done["next"] == "2"
    entry = answered(repo / "state")[-1]
    assert (entry["stage"], entry["response"], entry["answered_by"]) == ("1", "review", "user")

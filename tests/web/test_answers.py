"""`statedir serve --answer`: a run's page answers its open checkpoint and a FAIL-loop resolution as
the user's answer through the web (one commit, `Statedir-Answered-By: user`, channel `web`), only
by a POST from the same origin carrying the session's CSRF token and the head the page was read
at; every refusal leaves the store byte-identical, and without --answer nothing but GET and HEAD
is answered."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from statedir import api
from statedir.web.app import build
from tests.support.util import at_mandatory_2_5, copy_of, snapshot, to_integrity, trailers

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
SAME = {"origin": BASE}
FORM = re.compile(r'<form class="answer".*?</form>', re.S)


@pytest.fixture
def mandatory(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run p at stage 2.5's MANDATORY checkpoint (copied per test: the tests answer it)."""
    copy_of("mandatory-2.5-open", at_mandatory_2_5, repo, tmp_path_factory)
    return repo


def _failed_thrice(sd: api.StateDir) -> None:
    to_integrity(sd, "g", "2.5")
    for _ in range(3):
        sd.integrity("g", "2.5", "FAIL", refs_total=4, refs_verified=2, issues=["high:citation:ref 7 not found"],
                     actor="integrity_verification")


def _client(repo: Path, answer: bool = True, **kwargs: object) -> TestClient:
    return TestClient(build(repo / "state", port=PORT, answer=answer, **kwargs), base_url=BASE)  # type: ignore[arg-type]


def _form(client: TestClient, run: str, action: str = "confirm") -> dict[str, str]:
    """The hidden fields of the run page's `action` form (as a browser would send them)."""
    page = client.get(f"/runs/{run}")
    assert page.status_code == 200
    [form] = [f for f in FORM.findall(page.text) if f'name="action" value="{action}"' in f]
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))


def _head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def answered_on_the_web(answered: httpx.Response, repo: Path, action: str) -> None:
    """The form's answer was taken (a redirect) and committed as the user's, through the web."""
    assert answered.status_code == 303, answered.text
    said = trailers(repo)
    assert said["Statedir-Action"] == action and said["Statedir-Answered-By"] == "user"
    assert said["Statedir-Channel"] == "web"


def test_the_page_offers_the_answers_the_template_allows(mandatory: Path) -> None:
    client = _client(mandatory)
    page = client.get("/runs/p")
    [form] = FORM.findall(page.text)
    assert 'action="/runs/p/answer"' in form and 'method="post"' in form
    assert '<option value="continue">' in form and '<option value="review">' in form  # confirm's responses
    assert "HttpOnly; SameSite=Strict" in page.headers["set-cookie"]
    assert _form(client, "p")["expect"] == _head(mandatory) and len(_form(client, "p")["csrf"]) == 64


def test_an_answer_is_one_commit_recorded_as_the_users_through_the_web(mandatory: Path) -> None:
    client = _client(mandatory)
    before = _head(mandatory)
    answered = client.post("/runs/p/answer", data={**_form(client, "p"), "next": "3", "response": "continue"},
                           headers=SAME, follow_redirects=False)
    assert answered.status_code == 303, answered.text
    commit = _head(mandatory)
    assert answered.headers["location"] == f"/runs/p?answered={commit}"
    assert subprocess.run(["git", "rev-list", "--count", f"{before}..{commit}"], cwd=mandatory, capture_output=True,
                          text=True).stdout.strip() == "1"
    said = trailers(mandatory)
    assert said["Statedir-Action"] == "confirm" and said["Statedir-Actor"] == "user"
    assert said["Statedir-Answered-By"] == "user" and said["Statedir-Channel"] == "web" and "Statedir-Via" not in said
    sd = api.StateDir(mandatory / "state")
    assert sd.status("p")["current_stage"] == "3" and sd.verify()["clean"]
    assert "Your answer is recorded" in client.get(answered.headers["location"]).text


def test_a_fail_loop_resolution_is_answered_the_same_way(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    copy_of("web-failed-2.5", _failed_thrice, repo, tmp_path_factory)
    client = _client(repo)
    [form] = FORM.findall(client.get("/runs/g").text)
    assert "handle_manually" in form and "continue_unverified" in form and "<textarea" in form
    answered = client.post("/runs/g/answer", data={**_form(client, "g", "resolve"), "stage": "2.5",
                                                   "decision": "handle_manually", "reason": "I check ref 7 myself"},
                           headers=SAME, follow_redirects=False)
    answered_on_the_web(answered, repo, "resolve")
    assert api.StateDir(repo / "state").verify()["clean"]


@pytest.mark.parametrize("change, headers, status", [
    ({"csrf": None}, SAME, 403),  # no token
    ({"csrf": "0" * 64}, SAME, 403),  # a wrong one
    ({}, {"origin": "http://evil.example"}, 403),  # another origin
    ({}, {"origin": "null"}, 403),
    ({}, {"origin": "http://127.0.0.1:9999"}, 403),  # another port is another origin
    ({}, {"referer": "http://evil.example/runs/p"}, 403),  # no Origin: the Referer decides
    ({}, {}, 403),  # neither
    ({"response": "skip it"}, SAME, 400),  # not an answer the rules take
    ({"action": "pipeline"}, SAME, 400),  # not an answer the web view gives
    ({"expect": None}, SAME, 400),  # no head it was read at
    ({"stage": "3"}, SAME, 400),  # a field confirm does not take
])
def test_a_refused_answer_changes_nothing(mandatory: Path, change: dict[str, str | None],
                                          headers: dict[str, str], status: int) -> None:
    client = _client(mandatory)
    data = {**_form(client, "p"), "next": "3", "response": "continue", **change}
    before = snapshot(mandatory)
    response = client.post("/runs/p/answer", data={k: v for k, v in data.items() if v is not None},
                           headers=headers, follow_redirects=False)
    assert response.status_code == status, response.text[:400]
    assert snapshot(mandatory) == before


def test_a_token_of_another_session_is_refused(mandatory: Path) -> None:
    client, other = _client(mandatory), _client(mandatory)
    fields = _form(client, "p")
    other.get("/runs/p")  # a session of its own: the first's token is not its
    before = snapshot(mandatory)
    response = other.post("/runs/p/answer", data={**fields, "response": "continue"}, headers=SAME)
    assert response.status_code == 403 and snapshot(mandatory) == before


def test_a_stale_answer_is_refused(mandatory: Path) -> None:
    client = _client(mandatory)
    fields = _form(client, "p")
    api.StateDir(mandatory / "state").pipeline("p", "paused")  # the run moved after the page was read
    before = snapshot(mandatory)
    response = client.post("/runs/p/answer", data={**fields, "response": "continue"}, headers=SAME)
    assert response.status_code == 409 and "HEAD_MOVED" in response.text and 'href="/runs/p"' in response.text
    assert snapshot(mandatory) == before


def test_a_form_that_is_not_url_encoded_is_refused(mandatory: Path) -> None:
    client = _client(mandatory)
    before = snapshot(mandatory)
    for content, kind in [(b'{"action": "confirm"}', "application/json"), (b"x" * 20_000, "application/x-www-form-urlencoded")]:
        response = client.post("/runs/p/answer", content=content, headers={**SAME, "content-type": kind})
        assert response.status_code == 400
    assert snapshot(mandatory) == before


@pytest.mark.parametrize("url", ["/", "/runs/p", "/runs/p/history", "/bus"])
def test_with_answer_nothing_else_takes_a_post(mandatory: Path, url: str) -> None:
    client = _client(mandatory)
    before = snapshot(mandatory)
    response = client.post(url, data=_form(client, "p"), headers=SAME)
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
    assert snapshot(mandatory) == before


def test_without_answer_the_view_stays_read_only(mandatory: Path) -> None:
    answering, reading = _client(mandatory), _client(mandatory, answer=False)
    fields = {**_form(answering, "p"), "response": "continue"}
    page = reading.get("/runs/p")
    assert not FORM.search(page.text) and "set-cookie" not in page.headers and "read-only view" in page.text
    reading.cookies.set("statedir_session", answering.cookies["statedir_session"])
    before = snapshot(mandatory)
    response = reading.post("/runs/p/answer", data=fields, headers=SAME)
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
    assert snapshot(mandatory) == before


def test_beyond_loopback_an_answer_also_needs_the_token(mandatory: Path) -> None:
    token = "s3cret-token-0123456789"
    client = _client(mandatory, token=token)
    assert client.get("/runs/p", params={"token": token}).status_code == 200
    fields = _form(client, "p")
    client.cookies.delete("statedir_token")
    before = snapshot(mandatory)
    assert client.post("/runs/p/answer", data={**fields, "response": "continue"}, headers=SAME).status_code == 401
    assert snapshot(mandatory) == before


def _blocked_by_mode_1(sd: api.StateDir) -> None:
    """Run b at 2.5 whose checklist blocks on mode 1 (citation hallucination): the user's to answer."""
    to_integrity(sd, "b", "2.5")
    sd.checklist("b", "2.5", ["1=SUSPECTED", *(f"{m}=CLEAR" for m in range(2, 8))], actor="integrity_verification")


def _forms_of(client: TestClient, run: str, action: str) -> list[str]:
    return [f for f in FORM.findall(client.get(f"/runs/{run}").text) if f'name="action" value="{action}"' in f]


def test_a_blocking_failure_mode_is_answered_in_the_browser(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    copy_of("web-mode-1-blocks", _blocked_by_mode_1, repo, tmp_path_factory)
    client = _client(repo)
    forms = _forms_of(client, "b", "acknowledge")
    assert len(forms) == 3 and all("<textarea" in f for f in forms)  # confirm, override, revise: each the user's
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', forms[0]))
    answered = client.post("/runs/b/answer", data={**hidden, "stage": "2.5", "mode": "1", "answer": "override",
                                                   "reason": "ref 7 is in the printed proceedings"},
                           headers=SAME, follow_redirects=False)
    answered_on_the_web(answered, repo, "acknowledge_mode")
    assert not _forms_of(client, "b", "acknowledge")  # answered: nothing of it left to answer
    assert api.StateDir(repo / "state").verify()["clean"]


def test_a_blocking_compliance_report_is_acknowledged_in_the_browser(repo: Path,
                                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.support.runs import warned_then_blocked

    copy_of("web-compliance-blocked", warned_then_blocked, repo, tmp_path_factory)
    client = _client(repo)
    [form] = _forms_of(client, "r", "compliance_override")
    assert "<textarea" in form and "Acknowledge the compliance block" in form
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
    before = snapshot(repo)
    wrong = client.post("/runs/r/answer", data={**hidden, "stage": "2.5", "override": "1"}, headers=SAME,
                        follow_redirects=False)
    assert wrong.status_code == 400 and snapshot(repo) == before  # a field the answer does not take
    answered = client.post("/runs/r/answer", data={**hidden, "stage": "2.5", "reason": "the protocol was registered"},
                           headers=SAME, follow_redirects=False)
    answered_on_the_web(answered, repo, "compliance_override")
    assert api.StateDir(repo / "state").verify()["clean"]

"""`statedir serve` over plain HTTP: what each page shows, and every safety point (reads only,
the Host header, the token, paths that stay in the store, the headers) against the real app."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from statedir import api
from statedir.web.app import build
from statedir.web.guard import CSP
from statedir.web.reading import PageReader
from tests.support.history import listings_read, other_commits, packed_without_graph
from tests.support.isolation import module_store
from tests.support.served import fill, serving
from tests.support.util import cli_json, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    with module_store(tmp_path_factory, "web") as work:
        yield work, fill(work / "state")


@pytest.fixture
def client(filled: tuple[Path, dict[str, str]]) -> TestClient:
    return TestClient(build(filled[0] / "state", host="127.0.0.1", port=PORT), base_url=BASE)


def _commits(work: Path, run: str) -> list[str]:
    return subprocess.run(["git", "log", "--format=%H", "--", f"state/runs/{run}"], cwd=work, capture_output=True,
                          text=True, check=True).stdout.split()


# --- what the pages show -----------------------------------------------------------------------
def test_the_runs_page_lists_each_run_with_its_last_change(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert 'href="/runs/paper-a"' in page.text and 'href="/runs/paper-b"' in page.text
    assert "awaiting_confirmation" in page.text and "academic-pipeline" in page.text
    assert "waiting for the co-author" in page.text  # paper-b's last change, with its reason


def test_the_runs_page_filters_by_id_and_by_state(client: TestClient) -> None:
    by_id = client.get("/", params={"q": "PAPER-B"}).text
    assert 'href="/runs/paper-b"' in by_id and 'href="/runs/paper-a"' not in by_id
    by_state = client.get("/", params={"state": "paused"}).text
    assert 'href="/runs/paper-b"' in by_state and 'href="/runs/paper-a"' not in by_state
    assert "No run matches" in client.get("/", params={"state": "aborted"}).text


def test_the_runs_listing_pages_and_opens_only_the_runs_it_shows(filled: tuple[Path, dict[str, str]]) -> None:
    reader = PageReader(filled[0] / "state")
    first = reader.runs_page(size=1)
    assert [r["run_id"] for r in first.rows] == ["paper-a"] and first.next_after == "paper-a" and first.total == 2
    assert list(reader._summaries) == ["paper-a"]  # paper-b was not opened
    second = reader.runs_page(size=1, after=first.next_after)
    assert [r["run_id"] for r in second.rows] == ["paper-b"] and second.next_after is None


def test_the_runs_listing_numbers_its_pages_and_links_back(filled: tuple[Path, dict[str, str]]) -> None:
    reader = PageReader(filled[0] / "state")
    first = reader.runs_page(size=1)
    assert first.page == 1 and first.prev_after is None and first.pages == [(1, ""), (2, "paper-a")]
    second = reader.runs_page(size=1, after="paper-a")
    assert second.page == 2 and second.prev_after == "" and second.matched == 2
    assert reader.runs_page(size=1, text="B").matched == 1


def test_the_runs_page_sorts_by_last_change(client: TestClient, filled: tuple[Path, dict[str, str]]) -> None:
    reader = PageReader(filled[0] / "state")
    first = reader.changed_page(size=1)
    assert [r["run_id"] for r in first.rows] == ["paper-b"] and first.next_after == "2"  # paused after a's stage 1
    second = reader.changed_page(size=1, page=2)
    assert [r["run_id"] for r in second.rows] == ["paper-a"] and second.next_after is None
    assert second.prev_after == "1" and second.pages == [(1, "1"), (2, "2")]
    page = client.get("/", params={"sort": "changed"}).text
    assert page.index('href="/runs/paper-b"') < page.index('href="/runs/paper-a"')
    assert '<option value="changed" selected>' in page
    by_id = client.get("/").text
    assert by_id.index('href="/runs/paper-a"') < by_id.index('href="/runs/paper-b"')


def test_the_runs_page_counts_what_the_filter_matches_and_offers_the_templates_states(client: TestClient) -> None:
    page = client.get("/", params={"q": "paper-b"}).text
    assert "1 of 2 run(s) match" in page
    chooser = re.search(r'<select id="state".*?</select>', client.get("/").text, re.S)[0]  # type: ignore[index]
    states = re.findall(r'<option value="([a-z_]*)"', chooser)
    assert states == ["", "initializing", "running", "awaiting_confirmation", "paused", "completed", "aborted"]
    assert '<option value="paused" selected>' in client.get("/", params={"state": "paused"}).text


def test_a_filter_answers_within_its_time_budget_and_goes_on_from_there(filled: tuple[Path, dict[str, str]],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from statedir.web import reading

    monkeypatch.setattr(reading, "SCAN_BATCH", 1)
    reader = PageReader(filled[0] / "state")
    first = reader.runs_page(state="paused", size=1, budget=0)  # out of time after the first batch
    assert first.rows == [] and first.searched_to == "paper-a" and first.next_after == "paper-a"
    second = reader.runs_page(state="paused", size=1, budget=0, after=first.next_after)
    assert [r["run_id"] for r in second.rows] == ["paper-b"] and second.searched_to is None
    assert second.next_after is None


def test_a_moved_head_forgets_only_the_runs_it_changed(repo: Path, sd: api.StateDir) -> None:
    root = repo / "state"
    for run_id in ("r1", "r2"):
        sd.new(run_id, topic="T")
    reader = PageReader(root)
    before = {r["run_id"]: r for r in reader.runs_page().rows}
    sd.pipeline("r1", "paused")
    after = {r["run_id"]: r for r in reader.runs_page().rows}
    assert after["r1"]["pipeline_state"] == "paused" and after["r1"] is not before["r1"]
    assert after["r2"] is before["r2"]  # not read again
    sd.new("r3", topic="T")
    assert [r["run_id"] for r in reader.runs_page().rows] == ["r1", "r2", "r3"]
    subprocess.run(["git", "rm", "-rq", "state/runs/r2"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "r2 removed by hand"], cwd=repo, check=True)
    assert [r["run_id"] for r in reader.runs_page().rows] == ["r1", "r3"]


def test_a_run_page_has_the_dashboard_graph_checkpoint_moves_materials_and_logs(client: TestClient) -> None:
    page = client.get("/runs/paper-a").text
    assert "Academic Pipeline Status" in page  # the Progress Dashboard's text form, to copy
    board = page[page.index('<table class="board'):page.index("</table>", page.index('<table class="board'))]
    assert "[v]" in board and "RESEARCH" in board and 'data-label="Status"' in board  # and as HTML
    assert "Likely next:" in page  # the move that carries the run on, the rest folded
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert 'class="node node-done" data-key="1"' in svg and "MANDATORY" in svg
    assert "<dt>stage</dt><dd>1</dd>" in page and "<code>confirm</code>" in page  # open checkpoint, next
    assert "research_v1" in page and "UNVERIFIED" in page  # the material's version and passport
    assert "transitions (" in page and "checkpoints (" in page  # the logs


def test_the_history_links_every_commit_to_its_diff_and_state(client: TestClient,
                                                              filled: tuple[Path, dict[str, str]]) -> None:
    page = client.get("/runs/paper-a/history").text
    commits = _commits(filled[0], "paper-a")
    for sha in commits:
        assert f'/runs/paper-a/commits/{sha}"' in page and f'/runs/paper-a/at/{sha}"' in page
    assert "clean" in page and "signed" not in page  # verify ran: no finding; nobody is bound, nothing to say
    assert "sync: sync:" not in page and "new: new run" not in page  # a title does not repeat its action
    diff = client.get(f"/runs/paper-a/commits/{commits[0]}").text  # stage 1 completed
    assert "checkpoint" in diff and "completed" in diff
    assert "<h1>stage 1 completed</h1>" in diff  # nor does a commit's page ("stage: stage 1 completed")
    assert "<h1>new run paper-a" in client.get(f"/runs/paper-a/commits/{commits[-1]}").text
    at = client.get(f"/runs/paper-a/at/{commits[-1]}").text  # the run page as `new` made it
    assert "initializing" in at and "awaiting_confirmation" not in at and '<table class="board' in at
    assert "<svg" in at and "No checkpoint was open." in at and "?raw=1" in at
    raw = client.get(f"/runs/paper-a/at/{commits[-1]}?raw=1").text  # the document, one link away
    assert '<pre class="document">' in raw and "&#34;run_id&#34;: &#34;paper-a&#34;" in raw


def test_long_histories_and_logs_show_their_newest(client: TestClient, filled: tuple[Path, dict[str, str]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from statedir.web import reading

    monkeypatch.setattr(reading, "HISTORY", 2)
    monkeypatch.setattr(reading, "LOG_ENTRIES", 2)
    commits = _commits(filled[0], "paper-a")
    page = client.get("/runs/paper-a/history").text
    assert "The newest 2 commits" in page and commits[1] in page and commits[2] not in page
    run = client.get("/runs/paper-a").text
    assert f"The newest 2 of {len(commits)} entries" in run  # one transitions entry a commit


def test_a_hand_edit_is_marked_on_the_timeline(tmp_path: Path, repo: Path, sd: api.StateDir) -> None:
    root = repo / "state"
    sd.new("r1", topic="T")
    state = root / "runs/r1/state.yaml"
    state.write_text(state.read_text().replace("language: en", "language: de"))
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=repo, check=True)
    page = TestClient(build(root, port=PORT), base_url=BASE).get("/runs/r1/history").text
    assert "has-findings" in page and "verify hand_edit" in page


def test_the_history_page_reads_no_listing_of_runs_once_the_runs_trees_are_remembered(
        repo: Path, sd: api.StateDir, monkeypatch: pytest.MonkeyPatch) -> None:
    sd.new("r1", topic="T")
    sd.new("r2", topic="other")
    for n in range(3):
        sd.set("r1", "topic", f"T {n}", reason="t")
        sd.set("r2", "topic", f"other {n}", reason="t")
    packed_without_graph(repo)
    trace = repo.parent / "pack-access.txt"
    monkeypatch.setenv("GIT_TRACE_PACK_ACCESS", str(trace))
    reader = PageReader(repo / "state")
    first = reader.history("r1")
    first_reads = listings_read(repo, trace)
    trace.unlink()
    again = reader.history("r1")
    assert again == first and len(first["entries"]) == 4 and first["verify"]["clean"]
    assert first_reads >= 4  # the run's commits and their parents looked up through runs/ once
    assert listings_read(repo, trace) == 0  # then read by the run's trees alone


def test_a_long_runs_history_page_verifies_the_commits_shown_not_the_history_since(
        repo: Path, sd: api.StateDir, monkeypatch: pytest.MonkeyPatch) -> None:
    from statedir.web import reading

    monkeypatch.setattr(reading, "HISTORY", 3)
    sd.new("r1", topic="T")
    for n in range(3):
        sd.set("r1", "topic", f"old {n}", reason="t")
    other_commits(repo, 1000)
    sd.set("r1", "topic", "new", reason="t")
    reader = PageReader(repo / "state")
    reader.history("r1")  # the run's listings and trees remembered (one walk each)
    sd.set("r1", "topic", "newer", reason="t")
    packed_without_graph(repo)
    trace = repo.parent / "pack-access.txt"
    monkeypatch.setenv("GIT_TRACE_PACK_ACCESS", str(trace))
    page = reader.history("r1")
    reads = len(trace.read_text().splitlines())
    shown = [e["commit"] for e in page["entries"]]
    assert shown == _commits(repo, "r1")[:3] and page["truncated"]
    assert page["verify"] == sd.verify("r1", since=_commits(repo, "r1")[3])  # verify since the oldest left out
    assert page["verify"]["checked"] == 3 and page["verify"]["clean"]
    assert reads <= 250, reads  # the new commit, the three shown and their files: not the 1,000 commits since


def test_an_acknowledged_finding_is_marked_as_acknowledged_on_the_timeline(repo: Path, sd: api.StateDir) -> None:
    root = repo / "state"
    sd.new("r1", topic="T")
    state = root / "runs/r1/state.yaml"
    state.write_text(state.read_text().replace("language: en", "language: de"))
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=repo, check=True)
    edit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    sd.acknowledge(edit, reason="reviewed: the language was wrong")  # the API's: what is tested is the page
    page = TestClient(build(root, port=PORT), base_url=BASE).get("/runs/r1/history").text
    assert "has-findings" not in page and "has-acknowledged" in page
    assert "verify hand_edit · acknowledged" in page and "1 acknowledged" in page


def test_bus_sessions_and_the_research_tree(client: TestClient, filled: tuple[Path, dict[str, str]]) -> None:
    bus = client.get("/bus").text
    assert "2026-06-30-member-blog" in bus and "0-requirements" in bus
    row = re.search(r"<tr><td data-label=\"Field\"><code>phases\.0-requirements\.status</code></td>(.*?)</tr>", bus, re.S)
    assert row and ">done<" in row[1] and "<time" in row[1] and "pipeline_orchestrator" in row[1]  # its value, when, by whom
    assert "History (1 change(s))" in bus and "bus set 2026-06-30-member-blog phases.0-requirements.status = done" in bus
    assert "<pre>" not in bus  # no JSON fragments
    research = client.get("/research").text
    for text in ("Quality assurance", "Does AI change QA?", "It shortens review cycles", "Twelve studies found",
                 "Review cycles are shorter", filled[1]["research_run"]):
        assert text in research
    assert research.index("Does AI change QA?") < research.index("Twelve studies found")  # nested under it


def test_head_and_the_live_stream(client: TestClient, filled: tuple[Path, dict[str, str]]) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=filled[0], capture_output=True, text=True).stdout.strip()
    assert client.get("/head").json() == {"head": head}


# --- safety -------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
@pytest.mark.parametrize("url", ["/", "/runs/paper-a", "/static/style.css", "/nowhere"])
def test_nothing_but_get_and_head_is_answered(client: TestClient, filled: tuple[Path, dict[str, str]],
                                              method: str, url: str) -> None:
    before = snapshot(filled[0])
    response = client.request(method, url, content=b"x=1")
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
    assert snapshot(filled[0]) == before
    assert client.head("/").status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1:9999", "127.0.0.1.nip.io:8765", ""])
def test_a_foreign_host_header_is_refused(client: TestClient, host: str) -> None:
    response = client.get("/", headers={"host": host})
    assert response.status_code == 421 and "statedir" not in response.text.split("\n")[0].lower()


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765"])
def test_the_loopback_names_of_the_bound_port_are_answered(client: TestClient, host: str) -> None:
    assert client.get("/", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("url", ["/runs/..%2F..%2F..%2Fetc%2Fpasswd", "/runs/%2e%2e/history", "/runs/.git",
                                 "/static/..%2Fapp.py", "/static/../../statedir.yaml", "/runs/paper-a/at/HEAD~1",
                                 "/runs/paper-a/commits/--output=x", "/runs/paper-a/at/deadbeef%3Bls",
                                 "/runs/paper-a/commits/0000000000", "/runs/paper-a/at/abcdef%0A"])
def test_paths_cannot_leave_the_store(client: TestClient, url: str) -> None:
    response = client.get(url)
    assert response.status_code in (400, 404), response.text[:300]
    assert "root:" not in response.text and "import" not in response.text


def test_every_answer_carries_the_security_headers(client: TestClient) -> None:
    for url in ("/", "/runs/paper-a", "/static/live.js", "/nowhere", "/head"):
        headers = client.get(url).headers
        assert headers["content-security-policy"] == CSP, url
        assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP and "http" not in CSP


def test_pages_load_nothing_from_elsewhere(client: TestClient) -> None:
    for url in ("/", "/runs/paper-a", "/runs/paper-a/history", "/bus", "/research"):
        page = client.get(url).text
        assert not re.search(r"""(src|href)=["'](https?:)?//""", page), url
        assert "<script>" not in page and " style=" not in page and " on" + "click=" not in page


def test_a_token_is_needed_when_one_is_set(filled: tuple[Path, dict[str, str]]) -> None:
    token = "s3cret-token-0123456789"
    client = TestClient(build(filled[0] / "state", port=PORT, token=token), base_url=BASE)
    assert client.get("/").status_code == 401
    assert client.get("/", params={"token": "wrong-token-0123456789"}).status_code == 401
    first = client.get("/runs/paper-a/history", params={"token": token, "page": "2"}, follow_redirects=False)
    assert first.status_code == 303 and "HttpOnly" in first.headers["set-cookie"]
    assert first.headers["location"] == "/runs/paper-a/history?page=2"  # the same address, the token left out
    followed = client.get("/", params={"token": token})
    assert followed.status_code == 200 and str(followed.url) == f"{BASE}/" and "token" not in str(followed.url)
    assert client.get("/runs/paper-a").status_code == 200  # the cookie carries it now
    from statedir.web.guard import _without_token

    leading = _without_token({"path": "//elsewhere.example/x", "query_string": b"token=t&a=1"})
    assert leading == "/elsewhere.example/x?a=1"  # a path, never another host's address
    assert TestClient(build(filled[0] / "state", port=PORT, token=token), base_url=BASE,
                      cookies={"statedir_token": "nope"}).get("/").status_code == 401


def test_a_wildcard_address_answers_any_host_but_only_with_the_token(filled: tuple[Path, dict[str, str]]) -> None:
    token = "s3cret-token-0123456789"
    client = TestClient(build(filled[0] / "state", host="0.0.0.0", port=PORT, token=token), base_url=BASE)
    assert client.get("/", headers={"host": "10.1.2.3:8765"}).status_code == 401
    assert client.get("/", headers={"host": "10.1.2.3:8765"}, params={"token": token}).status_code == 200
    with pytest.raises(ValueError):
        build(filled[0] / "state", host="0.0.0.0", port=PORT, token=None)


# --- the command ----------------------------------------------------------------------------------
def test_beyond_loopback_needs_a_token(filled: tuple[Path, dict[str, str]]) -> None:
    code, out = cli_json("serve", "--host", "0.0.0.0", "--store", str(filled[0] / "state"))
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE" and "--token" in out["error"]["message"]
    code, out = cli_json("serve", "--host", "0.0.0.0", "--token", "short", "--store", str(filled[0] / "state"))
    assert code == 2 and "16" in out["error"]["message"]


def test_the_missing_extra_is_named(filled: tuple[Path, dict[str, str]]) -> None:
    """Starlette made unimportable (as where the extra is not installed): MISSING_DEPENDENCY, exit 3."""
    code = ("import sys; sys.modules['starlette'] = None; from statedir.cli import main; "
            f"sys.exit(main(['serve', '--json', '--store', {str(filled[0] / 'state')!r}]))")
    proc = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=60)
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 3 and error["code"] == "MISSING_DEPENDENCY"
    assert "pip install 'statedir[web]'" in error["message"] and "Traceback" not in proc.stderr
    assert "pip install -e '.[web]'" in error["message"]  # what works in a clone of the repository


def test_a_port_in_use_is_an_error_naming_it(filled: tuple[Path, dict[str, str]]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, out = cli_json("serve", "--port", str(port), "--store", str(filled[0] / "state"))
    assert code == 3 and out["error"]["code"] == "IO_ERROR" and str(port) in out["error"]["message"]


def test_no_store_is_an_error_not_a_server(tmp_path: Path) -> None:
    """The store is looked at before the port is taken: a busy port does not hide a wrong --store."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        code, out = cli_json("serve", "--port", str(taken.getsockname()[1]), "--store", str(tmp_path))
    assert code == 3 and out["error"]["code"] == "NOT_A_STORE"


def test_open_hands_the_address_to_the_browser(filled: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """--open runs the user's browser ($BROWSER here: a script that writes down what it was given)."""
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}\n")
    browser.chmod(0o755)
    with serving(filled[0] / "state", "--open", env={"BROWSER": f"{browser} %s"}) as url:
        for _ in range(100):
            if opened.exists() and opened.read_text():
                break
            time.sleep(0.1)
        assert opened.read_text() == url
        assert httpx.get(url).status_code == 200


def test_the_real_server_streams_head_as_transitions_land(filled: tuple[Path, dict[str, str]]) -> None:
    """`statedir serve` as a subprocess: the Host check on a real socket, and a transition made
    by the CLI arriving on /events."""
    work = filled[0]
    with serving(work / "state") as url:
        port = url.rsplit(":", 1)[1].strip("/")
        assert httpx.get(url, headers={"host": "rebind.example:" + port}).status_code == 421
        with httpx.stream("GET", url + "events", timeout=20) as stream:
            lines = stream.iter_lines()
            first = _event(lines)
            assert first == subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True,
                                           text=True).stdout.strip()
            code, done = cli_json("pipeline", "paper-b", "running", "--store", str(work / "state"))
            assert code == 0
            assert _event(lines) == done["commit"]


def _event(lines) -> str:  # type: ignore[no-untyped-def]
    for line in lines:
        if line.startswith("data: "):
            return str(line[6:])
    raise AssertionError("the stream ended")


def test_the_stage_graph_labels_every_edge_that_has_a_condition(filled: tuple[Path, dict[str, str]]) -> None:
    """Each edge with a condition carries it as a label beside its curve (the way back 3 -> 2 too),
    inside the picture, never cut inside an escaped character."""
    svg = PageReader(filled[0] / "state").run("paper-a")["graph"]
    conditions = re.findall(r'<path class="edge[^"]*"[^>]*><title>[^<]*?: ([^<]+)</title>', svg)
    shown = re.findall(r'<text class="edge-label" x="(\d+)"[^>]*>([^<]+)</text>', svg)
    assert len(shown) >= len(conditions) > 3
    assert any("reject; redoes 2" in text for _, text in shown)  # the way back, on the left
    width = int(re.search(r'viewBox="0 0 (\d+) ', svg)[1])  # type: ignore[index]
    assert all(0 < int(x) < width for x, _ in shown)
    assert not any(re.search(r"&[#\w]*…", text) for _, text in shown)


def test_two_conditions_leading_the_same_way_are_one_arrow_with_one_label(filled: tuple[Path, dict[str, str]]) -> None:
    """3' leads to 4' on major_revision and on user_review_required: one arrow, one label naming
    both, not two labels drawn over each other (and so for 3' to 4.5)."""
    svg = PageReader(filled[0] / "state").run("paper-a")["graph"]
    shown = re.findall(r'<text class="edge-label" x="(\d+)" y="(\d+)"[^>]*>([^<]+)</text>', svg)
    assert len({(x, y) for x, y, _ in shown}) == len(shown), "two edge labels at one place"
    assert "decision in major_revision, user_review_required" in [text for _, _, text in shown]
    arcs = re.findall(r'<title>(\w+) to ([\w.]+)', svg)
    assert len(arcs) == len(set(arcs)) and arcs.count(("3p", "4.5")) == 1


def test_the_sample_store_generator_makes_runs_that_verify_and_move_on(tmp_path: Path) -> None:
    """bench/sample_store.py: the runs it copies stand where their models do, verify is clean, and a
    copy at the MANDATORY checkpoint takes its answer by the rules."""
    import runpy

    from tests.support.util import ROOT

    made = runpy.run_path(str(ROOT / "bench" / "sample_store.py"))["make"](tmp_path / "sample", 12)
    assert made["runs"] == 12 and made["verify_clean"] is True
    sd = api.StateDir(tmp_path / "sample" / "state")
    summaries = {s["run_id"]: s for s in sd.run_summaries(sd.run_ids())}
    assert len(summaries) == 12 and summaries["paper-00005"]["current_stage"] == "2.5"
    assert summaries["paper-00005"]["topic"].startswith("Human answers")
    sd.confirm("paper-00005", response="continue", actor="user")
    assert sd.status("paper-00005")["current_stage"] == "3" and sd.verify()["clean"]

"""`statedir serve` in a real browser (Debian's chromium driven by Playwright): a store made
through the CLI, the runs page, a click into a run, a commit's diff, a transition from the CLI
appearing live, keyboard reach and accessible names. Screenshots go to artifacts/web/.

Slow: a browser start and a server subprocess (about ten seconds in all). Skipped where
/usr/bin/chromium is missing, unless STATEDIR_REQUIRE_BROWSER=1 (CI), which makes that a failure.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.served import serving
from tests.support.util import CLEAR_ARGS, ROOT, cli, cli_json

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "artifacts" / "web"
pytestmark = pytest.mark.slow

# Every element a keyboard can reach, and its accessible name as a screen reader computes it
# in the simple cases these pages use (aria-label, a <label for>, the text, the title).
NAMES = """() => {
  const focusable = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
    .filter(e => e.tabIndex >= 0 && e.getClientRects().length > 0);
  return focusable.map(e => ({tag: e.tagName, id: e.id, href: e.getAttribute('href') || '',
    name: (e.getAttribute('aria-label') || (e.labels && e.labels.length ? e.labels[0].textContent : '')
           || e.textContent || e.getAttribute('title') || '').trim()}));
}"""


def _browser_or_skip() -> Any:
    required = os.environ.get("STATEDIR_REQUIRE_BROWSER") == "1"
    if not CHROMIUM.exists():
        if required:
            pytest.fail("STATEDIR_REQUIRE_BROWSER=1 but /usr/bin/chromium is missing: apt-get install -y chromium")
        pytest.skip("no /usr/bin/chromium (apt-get install -y chromium); STATEDIR_REQUIRE_BROWSER=1 makes this fail")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if required:
            pytest.fail("STATEDIR_REQUIRE_BROWSER=1 but playwright is not installed: pip install -e '.[dev]'")
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _browser_or_skip()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def browser_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.problems = problems
    yield page
    context.close()


@pytest.fixture
def store(repo: Path) -> Path:
    root = repo / "state"
    for args in (["init"], ["new", "paper-1", "--topic", "Checkpoints in agent pipelines"],
                 ["stage", "paper-1", "1", "in_progress", "--mode", "socratic"],
                 ["material", "paper-1", "rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"],
                 ["new", "paper-2", "--topic", "A second paper"]):
        proc = cli(*args, "--store", str(root))
        assert proc.returncode == 0, proc.stderr
    return root


def test_runs_to_a_run_to_a_diff_and_a_live_transition(browser_page: Any, store: Path) -> None:
    page = browser_page
    with serving(store) as url:
        page.goto(url)
        assert page.title() == "Runs · statedir"
        row = page.locator("table.runs tbody tr", has_text="paper-1")
        assert "in_progress" not in row.inner_text() and "running" in row.inner_text()
        page.screenshot(path=str(ARTIFACTS / "runs.png"))

        page.get_by_role("link", name="paper-1", exact=True).click()
        page.wait_for_url(re.compile(r"/runs/paper-1$"))
        assert page.locator("svg.stage-graph .node-current[data-key='1']").count() == 1
        assert page.locator("svg.stage-graph .mandatory").count() >= 1
        assert "No checkpoint is open." in page.inner_text("main")
        page.screenshot(path=str(ARTIFACTS / "run.png"), full_page=True)

        page.get_by_role("link", name="History and diffs").click()
        page.wait_for_url(re.compile(r"/history$"))
        page.locator("a.diff-link", has_text="material").first.click()
        page.wait_for_url(re.compile(r"/commits/[0-9a-f]{40}$"))
        changes = page.inner_text("table.diff")
        assert "research_v1" in changes and "added" in changes
        page.screenshot(path=str(ARTIFACTS / "diff.png"), full_page=True)

        page.goto(url + "runs/paper-1")
        page.evaluate("window.sameDocument = true")  # gone if the page reloaded
        code, done = cli_json("stage", "paper-1", "1", "completed", "--store", str(store))
        assert code == 0
        page.wait_for_function("head => document.body.dataset.head === head", arg=done["commit"], timeout=15_000)
        main = page.inner_text("main")
        assert "awaiting_confirmation" in main and "No checkpoint is open." not in main
        assert page.evaluate("window.sameDocument") is True
        assert "Updated" in page.inner_text("#live")
        page.screenshot(path=str(ARTIFACTS / "run-live.png"), full_page=True)
        assert page.problems == [], page.problems


def test_the_runs_page_updates_live_with_a_new_run(browser_page: Any, store: Path) -> None:
    page = browser_page
    with serving(store) as url:
        page.goto(url)
        assert page.locator("table.runs tbody tr").count() == 2
        assert cli("new", "paper-3", "--topic", "Third", "--store", str(store)).returncode == 0
        page.wait_for_selector("a[href='/runs/paper-3']", timeout=15_000)
        assert page.locator("table.runs tbody tr").count() == 3


def test_every_control_has_a_name_and_tab_reaches_it(browser_page: Any, store: Path) -> None:
    page = browser_page
    with serving(store) as url:
        for where in ("", "runs/paper-1", "runs/paper-1/history", "bus", "research"):
            _reachable_and_named(page, url + where)
        page.goto(url)
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        page.screenshot(path=str(ARTIFACTS / "keyboard.png"))
        assert page.problems == [], page.problems


def _reachable_and_named(page: Any, url: str) -> None:
    """Every focusable element of the page at `url` has a name, and Tab reaches each, the skip link first."""
    page.goto(url)
    controls = page.evaluate(NAMES)
    nameless = [c for c in controls if not c["name"]]
    assert controls and not nameless, nameless
    reached = []
    for _ in range(len(controls) + 2):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("[document.activeElement.tagName, document.activeElement.id, "
                                     "document.activeElement.getAttribute('href') || '', "
                                     "(document.activeElement.textContent || '').trim()]"))
    assert reached[0][3] == "Skip to content"  # the first Tab stop skips the navigation
    for control in controls:
        assert [control["tag"], control["id"], control["href"], control["name"]] in [
            [r[0], r[1], r[2], control["name"]] for r in reached], control
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.evaluate("[...document.querySelectorAll('svg')].every(s => s.getAttribute('role') === 'img' "
                         "&& s.querySelector('title'))")


@pytest.mark.parametrize("width", [1200, 900, 360])
def test_the_dashboard_stays_inside_its_frame(browser: Any, store: Path, width: int) -> None:
    """A wide Progress Dashboard scrolls inside its own frame: the page never scrolls sideways."""
    topic = "A topic long enough to widen the dashboard: " + "checkpoints, handoffs and reviews " * 4
    assert cli("new", "paper-wide", "--topic", topic, "--store", str(store)).returncode == 0
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        with serving(store) as url:
            page.goto(url + "runs/paper-wide")
            page.click("details.text-form summary")  # the dashboard's text form, to copy: opened
            sizes = page.evaluate("""() => {
              const pre = document.querySelector('pre.dashboard'), frame = pre.getBoundingClientRect();
              return {page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,
                      right: frame.right, inner: pre.scrollWidth, shown: pre.clientWidth,
                      wide: [...document.querySelectorAll('body *')]  // what sticks out, to name in a failure
                        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth)
                        .slice(0, 5).map(e => e.tagName + '.' + e.className)};
            }""")
            page.screenshot(path=str(ARTIFACTS / f"run-{width}.png"), full_page=True)
    finally:
        context.close()
    assert sizes["page"] <= sizes["view"] and sizes["right"] <= sizes["view"], sizes["wide"]
    assert sizes["inner"] > sizes["shown"] or width > 360, sizes  # narrower than it: the frame scrolls, not the page


# What breaks a page on a phone: it scrolls sideways, or a word is broken letter by letter (a
# line box of a cell narrower than the word it holds, e.g. `pap/er-1`).
LAYOUT = """() => {
  const view = document.documentElement.clientWidth;
  const broken = [...document.querySelectorAll('td, th, a, li, p, span, code, strong')].filter(e => {
    const words = (e.childNodes.length === 1 && e.firstChild.nodeType === 3 ? e.textContent : '').trim().split(/[\\s\\-\\/]+/);
    const longest = Math.max(0, ...words.filter(w => w.length <= 24).map(w => w.length));
    const range = document.createRange(); range.selectNodeContents(e);
    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
    return longest >= 5 && lines > words.length;  // more lines than words: a word was split
  }).slice(0, 5).map(e => e.tagName + ':' + e.textContent.trim().slice(0, 30));
  const graph = document.querySelector('svg.stage-graph');  // its scale: below 1 its 11 px labels shrink
  const scale = graph ? graph.getBoundingClientRect().width / graph.viewBox.baseVal.width : null;
  return {page: document.documentElement.scrollWidth, view, broken, scale};
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_every_page_reads_at_a_phone_and_a_desktop_width(browser: Any, store: Path, width: int) -> None:
    """Runs, a run, its history, a diff, the run as it was, bus and research: none scrolls sideways,
    none breaks a word letter by letter, the stage graph is drawn 1:1 (its frame scrolls); the screenshots are kept (artifacts/web/<page>-<width>.png)."""
    assert cli("bus", "set", "2026-06-30-member-blog", "phases.0-prd.status", "done", "--store", str(store)).returncode == 0
    code, log = cli_json("log", "paper-1", "--store", str(store))
    assert code == 0
    first = log[-1]["commit"]  # type: ignore[index]
    pages = {"runs": "", "run": "runs/paper-1", "history": "runs/paper-1/history", "diff": f"runs/paper-1/commits/{first}",
             "at": f"runs/paper-1/at/{first}", "bus": "bus", "research": "research"}
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    found = {}
    try:
        with serving(store) as url:
            for name, path in pages.items():
                page.goto(url + path)
                found[name] = page.evaluate(LAYOUT)
                page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
    finally:
        context.close()
    for name, sizes in found.items():
        assert sizes["page"] <= sizes["view"], (name, sizes)
        assert not sizes["broken"], (name, sizes["broken"])
        assert sizes["scale"] is None or sizes["scale"] > 0.99, (name, sizes)  # the graph's text at its size


def test_a_mandatory_checkpoint_answered_in_the_browser(browser_page: Any, repo: Path) -> None:
    """`serve --answer`: a stale answer refused (the run moved while the form was being filled in),
    a cross-origin POST refused, both with the store byte-identical; then the answer, recorded as
    the user's through the web."""
    from tests.support.util import snapshot, trailers

    root = repo / "state"
    for args in (["init"], ["new", "p", "--topic", "T", "--entry-point", "2.5"], ["material", "p", "paper_draft"],
                 ["stage", "p", "2.5", "in_progress"],
                 ["integrity", "p", "2.5", "PASS", "--refs-total", "1", "--refs-verified", "1",
                  "--actor", "integrity_verification"], ["checklist", "p", "2.5", *CLEAR_ARGS,
                                                          "--actor", "integrity_verification"],
                 ["stage", "p", "2.5", "completed"]):
        proc = cli(*args, "--store", str(root))
        assert proc.returncode == 0, proc.stderr
    page = browser_page
    with serving(root, "--answer") as url:
        page.goto(url + "runs/p")
        assert "MANDATORY" in page.inner_text("main")
        page.select_option("#answer-confirm-response", "continue")  # begun: the live view keeps the form
        assert cli("material", "p", "paper_draft", "--store", str(root)).returncode == 0
        page.wait_for_function("() => document.getElementById('live').textContent.includes('form is kept')",
                               timeout=15_000)
        before = snapshot(repo)
        with page.expect_navigation() as stale:
            page.click("#answer-confirm-submit")
        assert stale.value.status == 409 and "HEAD_MOVED" in page.inner_text("main")
        assert snapshot(repo) == before
        page.screenshot(path=str(ARTIFACTS / "answer-stale.png"), full_page=True)

        csrf = page.evaluate("fetch(location.origin + '/runs/p').then(r => r.text())"
                             ".then(t => t.match(/name=\"csrf\" value=\"(\\w+)\"/)[1])")
        hostile = (f'<form method="post" action="{url}runs/p/answer"><input name="action" value="confirm">'
                   f'<input name="csrf" value="{csrf}"><input name="response" value="continue">'
                   f'<button id="go">go</button></form>')
        page.route("http://elsewhere.example/", lambda route: route.fulfill(content_type="text/html", body=hostile))
        page.goto("http://elsewhere.example/")
        with page.expect_navigation() as cross:
            page.click("#go")
        assert cross.value.status == 403 and snapshot(repo) == before

        page.goto(url + "runs/p")
        page.select_option("#answer-confirm-response", "continue")
        page.click("#answer-confirm-submit")
        page.wait_for_url(re.compile(r"/runs/p\?answered=[0-9a-f]{40}$"))
        assert "Your answer is recorded" in page.inner_text("main")
        page.screenshot(path=str(ARTIFACTS / "answer-done.png"), full_page=True)
        refusals = ("status of 409", "status of 403")  # the two refused answers above, as the console reports them
        assert [p for p in page.problems if not any(r in p for r in refusals)] == [], page.problems
    said = trailers(repo)
    assert said["Statedir-Action"] == "confirm" and said["Statedir-Answered-By"] == "user"
    assert said["Statedir-Channel"] == "web" and said["Statedir-Actor"] == "user"
    assert "[..]REV" in cli_json("status", "p", "--store", str(root))[1]["line"]  # type: ignore[index]  # at stage 3

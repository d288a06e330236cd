"""A refusal shown in the web view names its next step as the command line (statedir.hints): the
page's reader is a person who started `statedir serve` from a shell, so the step is what they would
type there (`statedir runs`), never Python's `sd.runs()`."""
from __future__ import annotations

import html
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from statedir import api
from statedir.cli.words import CLI
from statedir.web.app import build
from tests.support.served import serving

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


def _refusal(page: str) -> str:
    start = page.index('<p class="error">') + len('<p class="error">')
    return html.unescape(page[start:page.index("</p>", start)])


def test_the_view_given_the_command_lines_words_says_the_step_in_them(sd: api.StateDir) -> None:
    root = sd.store.root
    said = {}
    for name, words in (("cli", CLI), ("default", None)):
        app = build(root, host="127.0.0.1", port=PORT, **({"words": words} if words else {}))
        page = TestClient(app, base_url=BASE).get("/runs/nope")
        assert page.status_code == 404
        said[name] = _refusal(page.text)
    assert said["cli"] == "no run 'nope' in this store; see `statedir runs`", said
    assert said["default"] == "no run 'nope' in this store; see `sd.runs()`", said  # the words are what differ


def test_statedir_serve_says_a_refusals_step_as_the_command_line(repo: Path, sd: api.StateDir) -> None:
    """The real server, as `statedir serve` starts it: the CLI hands the view its words."""
    sd.new("r1", topic="T")
    with serving(sd.store.root) as url:
        page = httpx.get(url + "runs/nope", timeout=20)
        assert page.status_code == 404
        said = _refusal(page.text)
        assert said == "no run 'nope' in this store; see `statedir runs`", said
        assert "sd." not in page.text

"""The Progress Dashboard's text (statedir.views.dashboard)."""
from __future__ import annotations

import textwrap

import pytest

from statedir import api
from statedir.views import dashboard


@pytest.mark.parametrize("text", [
    "Topic: AI and QA", "Topic: " + "x" * 36, "Topic: " + "x" * 37, "Topic: " + "word " * 20, "Topic: tab\there",
    "Topic: line\nbreak", "Topic: trailing ", "Topic: wide 漢字漢字", "Topic: nbsp\xa0here", "Topic:", "Topic: a  b",
])
def test_a_line_is_wrapped_as_textwrap_wraps_it(text: str) -> None:
    """Short plain lines skip textwrap (a status call need not load it); every line comes out as
    textwrap makes it."""
    width = dashboard.WIDTH - 2
    expected = [dashboard._boxed(part) for part in textwrap.wrap(text, width, subsequent_indent="  ") or [""]]
    assert dashboard._wrapped(text) == expected


def test_the_status_line_names_an_open_checkpoint_s_stage_by_its_id_too(sd: api.StateDir) -> None:
    """Short names may read alike (3.22's RE-REV and RE-REV' for 3' and 4'): the checkpoint's stage is named by both."""
    sd.new("p", topic="T")
    sd.stage("p", "1", "in_progress")
    sd.stage("p", "1", "completed")
    assert sd.status("p")["line"].endswith("|  checkpoint open: FULL after RES (1)")

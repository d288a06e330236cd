"""statedir.engine.template.prose: a landed template's prose names the command line's steps and
flags; each caller reads them in its own words, the command line exactly as the template wrote them."""
from __future__ import annotations

from statedir.cli.words import CLI
from statedir.engine.template import prose
from statedir.hints import WORDS

STAGE_4_5 = ("needs a PASS verdict with zero open issues, the gate to stage 5 (fix the open issues and record "
             "the new check with `statedir integrity`; PASS_WITH_NOTES or open issues keep stage 4.5 in progress), "
             "or after the FAIL rounds the user's resolution continue_unverified (statedir resolve)")


def test_the_command_line_reads_the_template_as_written() -> None:
    token = WORDS.set(CLI)
    try:
        assert prose.worded(STAGE_4_5) == STAGE_4_5
        assert prose.worded("needs a review decision (--decision)") == "needs a review decision (--decision)"
    finally:
        WORDS.reset(token)


def test_a_python_caller_reads_calls_and_arguments() -> None:
    said = prose.worded(STAGE_4_5)
    assert "`sd.integrity()`" in said and "(sd.resolve())" in said and "statedir " not in said
    assert prose.worded("needs a review decision (--decision)") == "needs a review decision (decision=)"


def test_prose_naming_no_step_is_left_alone() -> None:
    text = "the statedir store keeps it {hint} -- as is"
    assert prose.worded(text) == text

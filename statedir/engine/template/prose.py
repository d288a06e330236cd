"""A template's own prose (a stage's `completion_message`) in the caller's words.

A template is data its author wrote, and the landed ones (academic-pipeline@3.21 ... 3.24) never
change: their prose names the command line's steps and flags ("(statedir revision)", "`statedir
integrity`", "(--decision)"). Read here as what they are, a step (a Hint) and an option of the
command being run (`{opt:NAME}`), so each entry point says them in its own words (statedir.hints):
`sd.revision()` and `decision=` for a Python caller, `revision` and `decision` over MCP.
"""
from __future__ import annotations

import re

from statedir.hints import Hint, said

# A step as the templates write one: in parentheses or backquotes, the command alone.
_STEP = re.compile(r"(?<=[(`])statedir ([a-z][a-z-]*)(?=[)`])")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b(?!-)")


def worded(text: str) -> str:
    """`text`, a template's prose, with the steps and options it names in the current caller's words."""
    if "statedir " not in text and "--" not in text:
        return text
    hints: list[Hint] = []

    def step(found: re.Match[str]) -> str:
        hints.append(Hint(found[1]))
        return "{hint}" if len(hints) == 1 else "{hint:%d}" % len(hints)

    template = _FLAG.sub(lambda found: "{opt:" + found[1].replace("-", "_") + "}", _STEP.sub(step, text))
    return said(template, *hints)

"""Refusals read through the API store in the words the CLI says them in: the rules' tests that reach
the rules without starting the CLI (tests/cli and the end-to-end tests keep the CLI's own contract)."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from statedir.errors import StatedirError
from statedir.hints import WORDS, Hint, Words
from tests.support.util import snapshot


@contextlib.contextmanager
def cli_words() -> Iterator[None]:
    """What the API says in the CLI's words while the `with` lasts (its next steps as command lines),
    as tests/support/sim does: for the rules' tests that read a refusal's message through the API."""
    from statedir.cli.words import CLI
    from statedir.hints import WORDS

    said = WORDS.set(CLI)
    try:
        yield
    finally:
        WORDS.reset(said)


def api_refused(repo: Path, code: str, act: Callable[[], object]) -> dict[str, str]:
    """`act` (a call on the API store in `repo`) refused with `code`, the store byte-identical: the
    error's code and message (in the CLI's words), as cli_refused gives them."""
    before = snapshot(repo)
    with cli_words(), pytest.raises(StatedirError) as info:
        act()
    assert info.value.code == code, info.value.message
    assert snapshot(repo) == before
    return {"code": info.value.code, "message": info.value.message}


class CountingWords(Words):
    """The Python API's words, counting each message it words (`worded`, their templates)."""

    def __init__(self) -> None:
        self.worded: list[str] = []

    def fill(self, template: str, hints: tuple[Hint, ...]) -> str:
        self.worded.append(template)
        return super().fill(template, hints)


@contextlib.contextmanager
def counted_words() -> Iterator[CountingWords]:
    """CountingWords set as the words of what is made while the `with` lasts."""
    words = CountingWords()
    said = WORDS.set(words)
    try:
        yield words
    finally:
        WORDS.reset(said)

"""statedir.commands.help_text: a command's help and summary, read off its docstring as --help shows it."""
from __future__ import annotations

from statedir.commands.help_text import help_of, summary
from statedir.commands.table import Command


def sample() -> None:
    """Do a thing.

    More about it, for --help only.\f
    Not even for --help."""


def undocumented() -> None:
    pass


def test_a_command_says_its_help_and_its_first_paragraph() -> None:
    command = Command(("thing",), sample)
    assert summary(command) == "Do a thing."
    assert help_of(command) == "Do a thing.\n\nMore about it, for --help only."


def test_a_command_without_a_docstring_has_an_empty_help() -> None:
    assert help_of(Command(("bare",), undocumented)) == "" == summary(Command(("bare",), undocumented))

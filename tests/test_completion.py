"""Shell completion is typer's own, and is built only when no command is named."""
from __future__ import annotations

from conftest import cli


def test_completion_script_and_options_at_the_top_level() -> None:
    assert "--show-completion" in cli("--help").stdout
    script = cli("--show-completion", "bash")
    assert script.returncode == 0 and "_STATEDIR_COMPLETE" in script.stdout


def test_the_shell_is_answered_with_commands_and_options() -> None:
    commands = cli(env={"_STATEDIR_COMPLETE": "complete_bash", "COMP_WORDS": "statedir sta", "COMP_CWORD": "1"})
    assert commands.returncode == 0 and set(commands.stdout.split()) == {"stage", "status"}
    options = cli(env={"_STATEDIR_COMPLETE": "complete_bash", "COMP_WORDS": "statedir stage r1 --mo",
                       "COMP_CWORD": "3"})
    assert options.stdout.split() == ["--mode"]


def test_a_named_command_builds_no_completion() -> None:
    assert "--show-completion" not in cli("status", "--help").stdout
    assert cli("status", "--show-completion").returncode == 2  # not an option of a command

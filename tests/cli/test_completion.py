"""Shell completion is typer's own, and is built only when no command is named."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.util import cli, cli_json

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


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


def _complete(words: str, cwd: Path, **env: str) -> list[str]:
    proc = cli(cwd=cwd, env={"_STATEDIR_COMPLETE": "complete_bash", "COMP_WORDS": words,
                             "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)), **env})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.slow  # shell completion read through the CLI, a process a word
def test_run_ids_stage_ids_and_statuses_complete_from_the_store(sd: api.StateDir, repo: Path) -> None:
    sd.new("paper-1", topic="t")
    sd.new("paper-2", topic="t")
    sd.new("lin", topic="t", template="linear")
    assert _complete("statedir stage pa", repo) == ["paper-1", "paper-2"]
    assert _complete("statedir status ", repo) == ["lin", "paper-1", "paper-2"]
    assert _complete("statedir stage paper-1 4", repo) == ["4", "4p", "4.5"]  # the template's order
    assert _complete("statedir stage paper-1 2.5 ", repo) == ["pending", "in_progress", "completed", "skipped",
                                                            "blocked"]
    assert not (repo / "state/runs/lin/stages").exists()  # no stage has said anything yet: the template's ids
    linear_stage = _complete("statedir stage lin ", repo)[0]
    assert _complete(f"statedir stage lin {linear_stage} d", repo) == ["done"]
    assert _complete("statedir pipeline paper-1 a", repo) == ["aborted"]  # not awaiting_confirmation: never asked for
    assert sorted(_complete("statedir pipeline paper-1 ", repo)) == ["aborted", "completed", "paused", "running"]
    assert _complete("statedir prereq paper-1 2.", repo) == ["2.5"]
    elsewhere = repo / "elsewhere"
    elsewhere.mkdir()  # --store's variable names the store from anywhere
    assert _complete("statedir get p", elsewhere, STATEDIR_STORE=str(repo / "state")) == ["paper-1", "paper-2"]


def test_completion_outside_a_store_offers_nothing_and_fails_nothing(isolated: Path) -> None:
    assert _complete("statedir stage ", isolated) == []
    assert _complete("statedir stage r1 ", isolated) == []


def test_the_command_list_is_grouped_everyday_commands_first() -> None:
    listed = cli("--help").stdout
    headings = [h for h in ("Runs:", "Transitions:", "History:", "Sync:", "Bus & research:",
                            "Agents & integrations:") if h in listed]
    assert len(headings) == 6 and [listed.index(h) for h in headings] == sorted(listed.index(h) for h in headings)
    runs = listed[listed.index("Runs:"):listed.index("Transitions:")]
    assert all(f"  {c} " in runs for c in ("init", "new", "status", "next"))
    assert "  mcp " in listed[listed.index("Agents & integrations:"):]


def test_a_missing_argument_shows_the_usage_line(isolated: Path) -> None:
    proc = cli("stage", "r1", cwd=isolated)
    assert proc.returncode == 2 and "Missing argument" in proc.stderr
    assert "Usage: statedir stage [OPTIONS]" in proc.stderr and "statedir stage --help" in proc.stderr
    code, out = cli_json("stage", cwd=isolated)
    assert code == 2 and out["error"]["details"]["usage"].startswith("Usage: statedir stage")  # type: ignore[index]

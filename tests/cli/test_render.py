"""statedir.cli.render: what a person's terminal is shown never holds a terminal command. A topic,
a reason, a commit subject or a value from another machine arrives with its control characters
(ESC, CSI, OSC 52's clipboard write, BEL, CR, C1) and bidi overrides written as escapes, in every
command's human output; --json stays the exact JSON; statedir's own colour stays colour."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from statedir import api
from tests.support.util import cli, copy_of, on_terminal

# Screen clear (CSI), a window title and a clipboard write (OSC, ended by BEL), a carriage return
# that would overwrite the line, a C1 CSI, and a right-to-left override that reorders what follows.
HOSTILE = "t\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\rcr\x9b31m\u202eevil"
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e")


def _build(sd: api.StateDir) -> None:
    sd.new("p1", template="linear", topic=HOSTILE)
    sd.set("p1", "topic", HOSTILE + "2", reason=HOSTILE)
    sd.stage("p1", "plan", "in_progress")
    sd.pipeline("p1", "paused", reason=HOSTILE)
    sd.bus("2026-06-30-s1").set("note", HOSTILE)


@pytest.fixture
def store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose topic and reasons are hostile, a bus value too, and a collaborator's plain git
    commit with a hostile subject and file name on top."""
    copy_of("render-hostile", _build, repo, tmp_path_factory)
    (repo / "state" / f"n{HOSTILE}.txt").write_text("x\n")
    subprocess.run(["git", "add", "state"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", HOSTILE], cwd=repo, check=True)
    return repo


HUMAN = [
    ["runs"], ["status", "p1"], ["status", "p1", "--line"], ["show", "p1"], ["show", "p1", "--format", "json"],
    ["get", "p1", "topic"], ["get", "p1", "history.transitions"], ["next", "p1"], ["prereq", "p1", "build"],
    ["log"], ["log", "p1", "--cursor", "start"], ["diff", "p1", "HEAD~5"], ["versions", "p1", "plan"],
    ["verify"], ["doctor"], ["validate"], ["templates"],
    ["get", "p1", HOSTILE], ["status", HOSTILE], ["new", "p2", "--template", "linear", "--topic", HOSTILE],
    ["set", "p1", "topic", HOSTILE, "--reason", "r"],
    ["set", "p1", "language", "de", "--reason", HOSTILE], ["pipeline", "p1", "resumed"],
]


@pytest.mark.parametrize("args", HUMAN, ids=lambda args: " ".join(a for a in args if a.isprintable()))
def test_no_command_shows_a_control_character_from_the_store(store: Path, args: list[str]) -> None:
    proc = cli(*args, cwd=store)
    shown = proc.stdout + proc.stderr
    assert "Traceback" not in shown, shown
    for char in RAW:
        assert char not in shown, (args, char, shown)


@pytest.mark.parametrize("args", [["status", "p1"], ["log"], ["get", "p1", "topic"], ["get", "p1", HOSTILE], ["verify"],
                                  ["new", "p2", "--template", "linear", "--topic", HOSTILE]])
def test_the_hostile_text_is_shown_escaped_not_dropped(store: Path, args: list[str]) -> None:
    proc = cli(*args, cwd=store)
    assert "\\x1b]52;c;" in proc.stdout + proc.stderr and "\\u202eevil" in proc.stdout + proc.stderr


def test_json_is_the_exact_value_and_escaped_yaml_or_json_reads_back_the_same(store: Path) -> None:
    assert json.loads(cli("get", "p1", "topic", "--json", cwd=store).stdout) == HOSTILE + "2"
    assert json.loads(cli("show", "p1", "--format", "json", cwd=store).stdout)["topic"] == HOSTILE + "2"
    from statedir.files import yaml

    assert yaml.load(cli("show", "p1", cwd=store).stdout)["topic"] == HOSTILE + "2"


def test_at_a_terminal_statedir_s_own_colour_stays_and_the_store_s_codes_do_not(store: Path) -> None:
    proc, shown = on_terminal(["new", "p2", "--template", "linear", "--topic", HOSTILE], store, "stdout")
    assert proc.returncode == 0 and shown.startswith("\x1b[32mok\x1b[0m  ") and "\\u202eevil" in shown, shown
    assert not any(char in shown.replace("\x1b[32mok\x1b[0m", "").replace("\r\n", "\n") for char in RAW), shown
    proc, shown = on_terminal(["status", HOSTILE], store, "stderr")
    assert proc.returncode != 0 and shown.startswith("\x1b[31merror\x1b[0m: "), shown
    assert not any(char in shown.replace("\x1b[31merror\x1b[0m", "").replace("\r\n", "\n") for char in RAW), shown

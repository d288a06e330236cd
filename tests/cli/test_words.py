"""statedir.cli.words: the command line says a refusal's next step (statedir.hints) as the command
a person types, positionals in the command's order then the options, and an option as its flag."""
from __future__ import annotations

from pathlib import Path

from statedir import api
from statedir.cli.words import CLI
from statedir.hints import DOCTOR_FIX, SYNC_REPLAY, Hint, Placeholder
from tests.support.util import cli, cli_json


def test_a_hint_is_the_command_a_person_types() -> None:
    assert CLI.hint(DOCTOR_FIX) == "statedir doctor --fix" and CLI.hint(SYNC_REPLAY) == "statedir sync --replay"
    assert CLI.hint(Hint("init", {"branch": "b", "directory": "/x/state"})) == "statedir init /x/state --branch b"
    assert CLI.hint(Hint("people add", {"name": "ann", "roles": ["editor", "author"], "role": "lead"})) == \
        "statedir people add ann editor author --role lead"  # the API's `role` is the command's --role
    assert CLI.hint(Hint("people add", {"name": Placeholder("NAME"), "roles": Placeholder("ROLE...")})) == \
        "statedir people add NAME ROLE..."
    assert CLI.hint(Hint("set", {"run_id": "r 1", "field": "topic", "value": "x", "reason": None})) == \
        "statedir set 'r 1' topic x"  # a value the shell would split is quoted; an unset one left out
    assert CLI.option("file") == "--file" and CLI.option("entry_point") == "--entry-point"


def test_an_option_is_its_flag_material_files_included() -> None:
    assert CLI.option("file") == CLI.option("files") == "--file"  # files: material's repeatable --file, by its Python name
    assert CLI.option("entry_material") == "--entry-material" and CLI.option("exit_code") == "--exit-code"


def test_the_command_line_words_a_refusal_from_its_data(sd: api.StateDir, repo: Path) -> None:
    proc = cli("show", "nope", cwd=repo)
    assert proc.returncode == 2 and "no run 'nope' in this store; see `statedir runs`" in proc.stderr
    code, doc = cli_json("show", "nope", cwd=repo)
    assert code == 2 and doc["error"]["details"]["hints"] == [{"command": "runs", "args": {}}]  # type: ignore[index]
    proc = cli("new", "r1", "--topic", "T", "--actor", "someone", "--role", "editor", cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert ("--role names the role a person acts in, and this store lists no people "
            "(`statedir people add NAME ROLE...`): without them --actor names the role itself") in proc.stderr

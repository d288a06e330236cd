"""`statedir agents`: the guide and the SKILL.md name only real commands; --write is idempotent."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from statedir import agents
from statedir.cli.registry import TABLE as COMMANDS
from tests.support.util import call, cli, cli_json


def named_commands(text: str) -> set[str]:
    return set(re.findall(r"`statedir ([a-z][a-z-]*)", text))


@pytest.mark.parametrize("text", [agents.guide(), agents.skill()], ids=["guide", "skill"])
def test_every_command_named_exists_and_takes_the_flags_shown(text: str) -> None:
    named = named_commands(text)
    assert len(named) >= 12
    assert named <= set(COMMANDS), named - set(COMMANDS)
    for command in named:
        helped = call([command, "--help"])[1]  # the help, printed in this process
        for usage in re.findall(rf"`statedir {command} ([^`]*)`", text):
            for flag in re.findall(r"(--[a-z][a-z-]*)", usage):
                assert flag in helped, f"statedir {command} has no {flag}"


def test_the_skill_has_front_matter() -> None:
    text = agents.skill()
    head = re.match(r"---\nname: ([a-z0-9-]+)\ndescription: (.+)\n---\n", text)
    assert head and len(head.group(2)) < 400


def test_the_guide_names_the_exit_codes_and_every_error_code_it_branches_on() -> None:
    from statedir import errors

    text = agents.guide()
    codes = set(re.findall(r"`([A-Z_]{6,})`", text))
    known = {cls.code for cls in vars(errors).values()
             if isinstance(cls, type) and issubclass(cls, errors.StatedirError)}
    assert codes and codes <= known, codes - known
    assert all(f"{n} " in text for n in ("0", "1", "2", "3"))


def test_write_puts_the_block_between_markers_once_and_keeps_the_rest(isolated: Path) -> None:
    target = isolated / "AGENTS.md"
    target.write_text("# My project\n\nOur own rules.\n")
    assert cli_json("agents", "--write", str(target)) == (0, {"file": str(target), "action": "updated"})
    first = target.read_text()
    assert first.startswith("# My project\n\nOur own rules.\n\n" + agents.BEGIN)
    assert first.count(agents.BEGIN) == 1 and first.count(agents.END) == 1
    target.write_text(first + "\nMore of ours, after.\n")
    assert cli_json("agents", "--write", str(target))[1]["action"] == "unchanged"
    stale = target.read_text().replace("## Pipeline state: statedir", "## an old version of the guide")
    target.write_text(stale)
    assert cli_json("agents", "--write", str(target))[1]["action"] == "updated"
    again = target.read_text()
    assert again == first + "\nMore of ours, after.\n"  # rewritten, not duplicated; the rest untouched


def test_write_makes_a_new_file_and_refuses_damaged_markers(isolated: Path) -> None:
    fresh = isolated / "sub" / "CLAUDE.md"
    assert cli("agents", "--write", str(fresh)).returncode == 0
    assert fresh.read_text() == f"{agents.BEGIN}\n{agents.guide().rstrip()}\n{agents.END}\n"
    damaged = isolated / "AGENTS.md"
    damaged.write_text(f"x\n{agents.BEGIN}\nhalf a block\n")
    code, out = cli_json("agents", "--write", str(damaged))
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE"  # type: ignore[index]
    assert damaged.read_text() == f"x\n{agents.BEGIN}\nhalf a block\n"


def test_skill_write_is_the_whole_file(isolated: Path) -> None:
    target = isolated / ".claude" / "skills" / "statedir" / "SKILL.md"
    assert cli("agents", "--skill", "--write", str(target)).returncode == 0
    assert target.read_text() == agents.skill()
    assert cli("agents", "--skill").stdout == agents.skill()

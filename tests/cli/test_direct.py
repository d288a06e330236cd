"""statedir.cli.direct reads a plain call without typer: wherever it reads one, typer must read
the very same arguments (values and types), over many argv of every command; the plain calls
programs make are read directly, and a transition never loads typer."""
from __future__ import annotations

import random
from typing import Any

import pytest

from statedir.cli import direct, registry

registry.load()
COMMANDS = sorted(name for name, (function, settings) in registry.COMMANDS.items() if not settings)
SIGNERS = sorted(f"signers {name}" for name in registry.SUBCOMMANDS["signers"])  # typer's default command class
WORDS = ["r1", "1", "2.5", "in_progress", "", "-", "x y", "a=b", "-5", "-x", "--", "12", "0x1", " 7", "1_0",
         "--json", "--nope", "-h", "--help", "é", "state", "--reason", "--store"]
NUMBERS = ["12", "0", "-5", "+3", " 7", "1_0", "x", "007", "1.5"]


def _typer_reads(function: Any, argv: list[str], cls: Any = None) -> dict[str, Any] | None:
    """The keyword arguments typer calls the command with for argv, or None where it calls nothing
    (a usage error, help); `cls`: the command class typer is given (the bus's)."""
    import typer
    import typer.main

    converted = registry.typed(function)
    seen: list[dict[str, Any]] = []

    def record(**kwargs: Any) -> None:
        seen.append(kwargs)

    record.__signature__ = converted.__signature__  # type: ignore[attr-defined]
    record.__annotations__ = converted.__annotations__
    app = typer.Typer(add_completion=False)
    app.command(**({"cls": cls} if cls else {}))(record)
    command = typer.main.get_command(app)
    try:
        command.main(args=list(argv), prog_name="statedir", standalone_mode=False)
    except (typer.Exit, typer.Abort, typer.TyperException):  # usage errors too, as statedir.cli.main names them
        return None
    return seen[0] if seen else None


def _typed(value: Any) -> Any:
    """A value with its types spelt out: Path('a') and 'a' differ, as do 1 and '1'."""
    if isinstance(value, list):
        return ["list", [_typed(v) for v in value]]
    return [type(value).__name__, value]


def _argvs(function: Any, rng: random.Random, count: int) -> list[list[str]]:
    specs = direct._specs(function)
    assert specs is not None
    options = [s for s in specs if s.kind == "option"]
    arguments = [s for s in specs if s.kind == "argument"]
    out = []
    for _ in range(count):
        count = len(arguments) if rng.random() < 0.6 else rng.randint(0, len(arguments) + 1)
        words = [rng.choice(WORDS[:9] + ["r1", "topic", "x"] * 3) for _ in range(count)]
        required = [s for s in options if s.default is direct._MISSING and rng.random() < 0.9]
        for spec in dict.fromkeys(required + rng.sample(options, rng.randint(0, len(options)))):
            flag = rng.choice(spec.decls)
            pool = NUMBERS if spec.convert is int and rng.random() < 0.8 else WORDS
            for _ in range(2 if rng.random() < 0.15 else 1):
                if spec.convert is None:
                    words.append(flag if rng.random() < 0.9 else f"{flag}=1")
                elif rng.random() < 0.3 and flag.startswith("--"):
                    words.append(f"{flag}={rng.choice(pool)}")
                else:
                    words.extend([flag, rng.choice(pool)] if rng.random() < 0.95 else [flag])
        if rng.random() < 0.1:
            words.append(rng.choice(["--nope", "-h", "--help", "-"]))
        if rng.random() < 0.3:
            rng.shuffle(words)
        out.append(words)
    return out


def _function(name: str) -> Any:
    group, _, word = name.partition(" ")
    return registry.SUBCOMMANDS[group][word] if word else registry.COMMANDS[name][0]


def _read_alike(function: Any, seed: str, count: int, monkeypatch: pytest.MonkeyPatch, cls: Any = None) -> int:
    """Direct and typer (with the command class `cls`) over `count` generated argv, the environment
    set or empty in a third of them: wherever direct reads a call, typer reads the same. How many
    direct read."""
    rng = random.Random(seed)
    read = 0
    for n, argv in enumerate(_argvs(function, rng, count)):
        for var in ("STATEDIR_STORE", "STATEDIR_ACTOR"):  # from the environment too, set or empty
            if n % 3 == 0:
                monkeypatch.setenv(var, rng.choice(["", "some/where", "observer"]))
            else:
                monkeypatch.delenv(var, raising=False)
        ours = direct.parse(function, argv)
        if ours is None:
            continue
        read += 1
        theirs = _typer_reads(function, argv, cls)
        assert theirs is not None, f"typer refuses {argv!r}, direct read {ours!r}"
        assert {k: _typed(v) for k, v in ours.items()} == {k: _typed(v) for k, v in theirs.items()}, argv
    return read


@pytest.mark.parametrize("name", COMMANDS + SIGNERS)
def test_what_direct_reads_typer_reads_alike(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    function = _function(name)
    if direct._specs(function) is None:
        pytest.skip(f"{name} is always read by typer")
    assert _read_alike(function, name, 60, monkeypatch), f"direct read none of {name}'s calls"


@pytest.mark.parametrize("argv", [
    ["stage", "r1", "1", "in_progress"], ["stage", "r1", "2.5", "completed", "--json", "--actor", "observer"],
    ["set", "r1", "topic", "x", "--reason", "why"], ["set", "r1", "topic", "x", "--reason=why", "--expect", "HEAD"],
    ["status", "r1", "--line"], ["status", "--json", "r1"], ["get", "r1", "stages.1.status"],
    ["material", "r1", "rq_brief", "bibliography", "--file", "a.md", "--file", "b.md"],
    ["confirm", "r1", "--response", "continue"], ["new", "r2", "--topic", "t"], ["log", "r1", "--limit", "3"],
    ["validate", "state/statedir.yaml"], ["init"], ["next", "r1", "--store", "state"],
])
def test_the_plain_calls_programs_make_are_read_without_typer(argv: list[str]) -> None:
    function = registry.COMMANDS[argv[0]][0]
    ours = direct.parse(function, argv[1:])
    assert ours is not None
    assert ours == _typer_reads(function, argv[1:])


@pytest.mark.parametrize("argv", [
    ["set", "r1", "topic", "x", "--reason", "-x"],  # a value that looks like an option: click's reading
    ["set", "r1", "topic", "x", "--reason", "a", "--reason", "b"], ["status", "r1", "-h"], ["status"],
    ["log", "--limit", "three"], ["stage", "r1", "1", "in_progress", "extra"], ["status", "r1", "--line=yes"],
])
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert direct.parse(registry.COMMANDS[argv[0]][0], argv[1:]) is None


BUS = sorted(registry.SUBCOMMANDS["bus"])


@pytest.mark.parametrize("name", BUS)
def test_what_direct_reads_of_a_bus_call_typer_reads_alike(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bus's commands take every word but their options as an argument (a value may start
    with '-'): wherever direct reads a call, typer with the bus's command class reads the same."""
    from statedir.cli import bus

    function = registry.SUBCOMMANDS["bus"][name]
    assert _read_alike(function, f"bus {name}", 80, monkeypatch, bus._verbatim()), \
        f"direct read none of bus {name}'s calls"


@pytest.mark.parametrize("argv", [
    ["set", "2026-06-30-s", "phases.1-design.status", "done"], ["get", "2026-06-30-s", "vars.topic"],
    ["append", "2026-06-30-s", "evidence", "docs/a.md", "--check-path"], ["init", "2026-06-30-s", "--json"],
    ["clear", "2026-06-30-s", "--actor", "observer"], ["get", "2026-06-30-s"], ["set", "s", "f", "--", "-x"],
])
def test_the_plain_bus_calls_are_read_without_typer(argv: list[str]) -> None:
    from statedir.cli import bus

    function = registry.SUBCOMMANDS["bus"][argv[0]]
    ours = direct.parse(function, argv[1:])
    assert ours is not None
    assert ours == _typer_reads(function, argv[1:], bus._verbatim())


def test_what_direct_reads_of_research_typer_reads_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """research's command class words only typer's refusals (state.py's flat errors), so its
    calls are read directly too: wherever direct reads one, typer with that class reads the same."""
    from statedir.cli import research

    assert _plain_function("research") is research.research
    assert _read_alike(research.research, "research", 150, monkeypatch, research._flat_errors())


@pytest.mark.parametrize("argv", [
    ["--start-run", "--skill", "deep-research", "--question", "Offline support?"],
    ["--query", "--run-id", "run_20261130_abc123", "--json"], ["--record-result", "--run-id", "r", "--summary", "s"],
])
def test_the_plain_research_calls_are_read_without_typer(argv: list[str]) -> None:
    from statedir.cli import research

    ours = direct.parse(research.research, argv)
    assert ours is not None and ours == _typer_reads(research.research, argv, research._flat_errors())


def _plain_function(name: str) -> Any:
    from statedir import cli

    return cli._plain(name, [])[0]

"""The CLI's command registry: each command module registers its typer callbacks here, and
`build` makes a Typer app of the ones a call needs. Imports typer and statedir.errors only."""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any

os.environ.setdefault("TYPER_USE_RICH", "0")  # plain help and errors; rich costs start-up time

import typer  # noqa: E402

HELP = "Pipeline state as a git-friendly directory of YAML files: every transition one validated git commit."
COMMANDS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}
GROUPS: dict[str, tuple[typer.Typer, dict[str, Any]]] = {}  # sub-groups: `statedir bus init ...`
# Every command (or group) and the module of statedir.cli that registers it, in the order
# `statedir --help` lists them (everyday commands first): a call loads its command's module only.
TABLE = {
    "init": "store", "new": "write", "runs": "read", "status": "read", "show": "read", "get": "read",
    "next": "read", "log": "read", "stage": "write", "confirm": "write", "material": "write", "output": "write",
    "integrity": "write", "revision": "write", "loop": "write", "observe": "write", "pipeline": "write",
    "set": "write", "redo": "write", "resume": "write", "prereq": "read", "templates": "read",
    "validate": "store", "diff": "history", "versions": "history", "rollback": "history", "verify": "history",
    "doctor": "history", "sync": "sync", "graph": "graph", "bus": "bus", "research": "research",
    "signers": "signers", "bind": "ars", "seal": "ars", "agents": "agents", "mcp": "agents", "serve": "web",
    "demo": "store", "merge-driver": "sync",
}


def load(names: list[str] | None = None) -> None:
    """Import the modules that register the named commands (every command by default)."""
    import importlib

    for module in dict.fromkeys(TABLE[name] for name in (TABLE if names is None else names) if name in TABLE):
        importlib.import_module(f"statedir.cli.{module}")


class _Registry:
    """Collects the command functions; `build` makes a Typer app of the ones a call needs.

    Typer introspects every registered function each time it builds its click group, so a
    call that names its command loads and registers that command alone (`--help`: all of them).
    """

    def command(self, name: str | None = None, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            COMMANDS[name or function.__name__] = (function, kwargs)
            return function
        return register

    def group(self, name: str, group: typer.Typer, **kwargs: Any) -> None:
        """Register a typer sub-group of commands under `name`."""
        GROUPS[name] = (group, kwargs)


app = _Registry()


def build(names: list[str] | None = None, completion: bool = False) -> typer.Typer:
    """The app with the named commands (all by default); `completion` adds typer's
    --install-completion / --show-completion."""
    cli = typer.Typer(name="statedir", help=HELP, no_args_is_help=True, add_completion=completion,
                      pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]})
    cli.callback()(_group)  # a callback keeps one registered command a subcommand, not the app itself
    load(names)
    for name in TABLE:
        if names is not None and name not in names:
            continue
        if name in COMMANDS:
            function, kwargs = COMMANDS[name]
            cli.command(name, **kwargs)(function)
        else:
            group, kwargs = GROUPS[name]
            cli.add_typer(group, name=name, **kwargs)
    return cli


def _version(value: bool) -> None:
    if value:
        from statedir import __version__

        print(f"statedir {__version__}")
        raise typer.Exit(0)


def _group(version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_version, help="Print statedir's version and exit.")] = False) -> None:
    """Pipeline state as a git-friendly directory of YAML files: every transition one validated git commit."""


def command_group() -> Any:
    """The whole CLI as one click group (every registered command, built once): what the MCP
    server serves as tools."""
    import typer.main

    return typer.main.get_command(build())

"""The CLI's command registry: each command module registers its typer callbacks here, and
`build` makes a Typer app of the ones a call needs. Loads typer only when it builds one:
a command module (its parameters are `statedir.commands.params`) loads without it."""
# Lazy imports: functools, importlib, inspect, statedir, typer, typer.core: imported by the command that uses them:
#   `statedir COMMAND` loads this module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from statedir.commands import table
from statedir.commands.params import Option

if TYPE_CHECKING:
    import typer

HELP = "Pipeline state as a git-friendly directory of YAML files: every transition one validated git commit."
COMMANDS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}
# Sub-groups (`statedir bus init ...`): a typer.Typer, or a function that makes one when typer reads a call.
GROUPS: dict[str, tuple[typer.Typer | Callable[[], typer.Typer], dict[str, Any]]] = {}
# A sub-group's commands declared with statedir.commands.params, by group: `direct` reads their plain calls.
SUBCOMMANDS: dict[str, dict[str, Callable[..., Any]]] = {}
# A command's declared group of MCP tools (`@app.command(tools_group="control")`, statedir.mcp.catalog):
# which `statedir mcp --tools` group serves it; undeclared, the catalog finds one.
TOOLS_GROUPS: dict[str, str] = {}
# Every command (or group) and the module of statedir.cli that registers it, in the order
# `statedir --help` lists them (everyday commands first): a call loads its command's module only.
TABLE = {
    "init": "store", "new": "write", "runs": "read", "status": "read", "show": "read", "get": "read",
    "next": "read", "log": "read", "stage": "write", "confirm": "write", "material": "write", "output": "write",
    "integrity": "write", "revision": "write", "loop": "write", "observe": "write", "pipeline": "write",
    "set": "write", "redo": "write", "resume": "write", "resolve": "gates", "checklist": "checklist", "acknowledge": "checklist", "contract": "gates", "advisory": "gates", "compliance": "gates", "inquiry": "gates", "prereq": "read", "templates": "read",
    "validate": "store", "diff": "history", "versions": "history", "rollback": "history", "verify": "history",
    "doctor": "history", "sync": "sync", "graph": "graph", "bus": "bus", "research": "research",
    "signers": "signers", "people": "people", "bind": "ars", "seal": "ars", "agents": "agents", "mcp": "agents", "serve": "web",
    "demo": "store", "merge-driver": "sync",
}

# The headings `statedir --help` lists the commands under, everyday work first (as `git help` does).
PANELS = {
    "Runs": ["init", "new", "runs", "status", "show", "get", "next", "prereq", "templates", "validate"],
    "Transitions": ["stage", "confirm", "material", "output", "integrity", "revision", "loop", "observe",
                    "pipeline", "set", "redo", "resume", "resolve", "checklist", "acknowledge", "contract",
                    "advisory", "compliance", "inquiry"],
    "History": ["log", "diff", "versions", "rollback", "verify", "doctor"],
    "Sync": ["sync", "merge-driver"],
    "Bus & research": ["bus", "research"],
    "Agents & integrations": ["agents", "mcp", "serve", "graph", "bind", "seal", "signers", "people", "demo"],
}


def short_help(command: Any) -> str:
    """A command's line in `statedir --help`: its own short help, else its help's first sentence
    whole (click's default cuts it at 45 characters and ends it in "...")."""
    if command.short_help:
        return str(command.short_help)
    text = " ".join((command.help or "").split("\n\n")[0].split())
    end = next((i + 1 for i, char in enumerate(text) if char == "." and text[i + 1:i + 2] in ("", " ")
                and not text[max(0, i - 3):i + 1].endswith(("e.g.", "i.e."))), len(text))
    return text[:end]


def _grouped_help(panels: dict[str, list[str]] | None = None) -> type:
    """typer's group class whose help lists each command with its first sentence whole, under
    `panels`' headings where given (the top level's PANELS; plain text: rich is not loaded). Made
    when an app is built, so a command module loads without typer."""
    import typer.core

    class GroupedHelp(typer.core.TyperGroup):
        def format_commands(self, ctx: Any, formatter: Any) -> None:
            listed = {name: self.get_command(ctx, name) for name in self.list_commands(ctx)}
            listed = {name: command for name, command in listed.items() if command is not None and not command.hidden}
            longest = max((len(name) for name in listed), default=0)  # one column for every heading
            headed = panels or {}
            panelled = {name for names in headed.values() for name in names}
            others = [name for name in listed if name not in panelled]  # a command no heading names yet
            for heading, names in [*headed.items(), ("Other" if headed else "Commands", others)]:
                rows = [(name.ljust(longest), short_help(listed[name])) for name in names if name in listed]
                if rows:
                    with formatter.section(heading):
                        formatter.write_dl(rows)

    return GroupedHelp


def sub_group(name: str, help_text: str) -> Any:
    """A command group under `statedir` (bus, signers): its commands listed as the top level's are."""
    import typer

    return typer.Typer(name=name, help=help_text, no_args_is_help=True, add_completion=False, cls=_grouped_help(),
                       context_settings={"help_option_names": ["-h", "--help"]})


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

    def command(self, name: str | None = None, *, tools_group: str | None = None,
                **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            COMMANDS[name or function.__name__] = (function, kwargs)
            if tools_group is not None:
                TOOLS_GROUPS[name or function.__name__] = tools_group
            return function
        return register

    def group(self, name: str, group: typer.Typer | Callable[[], typer.Typer], **kwargs: Any) -> None:
        """Register a typer sub-group of commands under `name` (or the function that builds it)."""
        GROUPS[name] = (group, kwargs)

    def subcommand(self, group: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register `statedir GROUP NAME`'s function (its group's builder hands it to typer)."""
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            SUBCOMMANDS.setdefault(group, {})[name] = function
            return function
        return register


app = _Registry()


def typed(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` as typer takes it: the same callable, its parameters as the command table reads
    them (statedir.commands.table), each `Option`/`Argument` made typer's own."""
    import functools
    import inspect

    import typer

    def convert(parameter: inspect.Parameter, read: table.Parameter) -> Any:
        if read.declared is None:
            return read.hint
        declared = read.declared
        info = (typer.Option if declared.kind == "option" else typer.Argument)(*declared.decls, **declared.settings)
        if declared.kind == "argument" and info.metavar is None:
            info.metavar = _argument_metavar(parameter)
        return Annotated[read.base, info]

    signature = inspect.signature(function)
    parameters = [p.replace(annotation=convert(p, read))
                  for p, read in zip(signature.parameters.values(), table.parameters(function), strict=True)]

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    call.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in parameters}
    return call


def _argument_metavar(parameter: Any) -> str:
    """RUN_ID: the argument's name as --help and the MCP server's wording name it (click would
    print `{run_id}`); the usage line adds [ ] and ... (`_plain_usage`)."""
    return str(parameter.name).upper()


def _plain_usage(cls: type | Callable[[], type] | None) -> type:
    """`cls` (typer's command class by default, or a function making one) whose usage line names
    arguments as --help does, `RUN_ID STAGE STATUS`: typer wraps a required one in braces, as
    click does choices."""
    import typer.core

    if cls is not None and not isinstance(cls, type):  # a function making the class when typer reads a call
        cls = cls()
    base = cls or typer.core.TyperCommand
    if getattr(base, "plain_usage", False):
        return base

    def collect_usage_pieces(self: Any, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            for piece in param.get_usage_pieces(ctx):
                if param.param_type_name == "argument":
                    # typer's braces round a required one (typer 0.29: `{NAMES}...`); an optional one's
                    # brackets once, where its metavar holds them already (0.29: `[[PUBLIC_KEY]]`)
                    piece = piece.replace("{", "").replace("}", "").replace("[[", "[").replace("]]", "]")
                    piece += "..." if param.nargs != 1 and not piece.endswith("...") else ""
                pieces.append(piece)
        return pieces

    return type(base.__name__, (base,), {"plain_usage": True, "collect_usage_pieces": collect_usage_pieces})


def build(names: list[str] | None = None, completion: bool = False) -> typer.Typer:
    """The app with the named commands (all by default); `completion` adds typer's
    --install-completion / --show-completion."""
    os.environ.setdefault("TYPER_USE_RICH", "0")  # plain help and errors; rich costs start-up time
    import typer

    cli = typer.Typer(name="statedir", help=HELP, no_args_is_help=True, add_completion=completion, cls=_grouped_help(PANELS),
                      pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]})
    cli.callback()(typed(_group))  # a callback keeps one registered command a subcommand, not the app itself
    load(names)
    for name in TABLE:
        if names is not None and name not in names:
            continue
        if name in COMMANDS:
            function, kwargs = COMMANDS[name]
            cli.command(name, **{**kwargs, "cls": _plain_usage(kwargs.get("cls"))})(typed(function))
        else:
            group, kwargs = GROUPS[name]
            group = group if isinstance(group, typer.Typer) else group()
            for info in group.registered_commands:
                info.cls = _plain_usage(info.cls)
            cli.add_typer(group, name=name, **kwargs)
    return cli


def _version(value: bool) -> None:
    if value:
        import typer

        from statedir import __version__

        print(f"statedir {__version__}")
        raise typer.Exit(0)


def _group(version: Annotated[bool, Option(
        "--version", is_eager=True, callback=_version, help="Print statedir's version and exit.")] = False) -> None:
    """Pipeline state as a git-friendly directory of YAML files: every transition one validated git commit."""


def command_table() -> tuple[table.Command, ...]:
    """Every command of the CLI (a sub-group's each under its group's name) as the command table
    has it, in the order --help lists them: what the MCP server serves as tools."""
    load()
    found: list[table.Command] = []
    for name in TABLE:
        if name in COMMANDS:
            function, settings = COMMANDS[name]
            found.append(table.Command((name,), function, hidden=bool(settings.get("hidden")),
                                       group=TOOLS_GROUPS.get(name)))
        else:
            found += [table.Command((name, word), function) for word, function in SUBCOMMANDS[name].items()]
    return tuple(found)

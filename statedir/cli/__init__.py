"""The `statedir` command line: thin typer callbacks over statedir.api; one error handler."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

os.environ.setdefault("TYPER_USE_RICH", "0")  # plain help and errors; rich costs start-up time

import typer  # noqa: E402

from statedir.errors import BAD_INPUT, InvalidValue, StatedirError  # noqa: E402

HELP = "Pipeline state as a git-friendly directory of YAML files: every transition one validated git commit."
COMMANDS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}
GROUPS: dict[str, tuple[typer.Typer, dict[str, Any]]] = {}  # sub-groups: `statedir bus init ...`


class _Registry:
    """Collects the command functions; `build` makes a Typer app of the ones a call needs.

    Typer introspects every registered function each time it builds its click group, so a
    call that names its command registers that command alone (`--help` registers all).
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
    for name, (function, kwargs) in COMMANDS.items():
        if names is None or name in names:
            cli.command(name, **kwargs)(function)
    for name, (group, kwargs) in GROUPS.items():
        if names is None or name in names:
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


from statedir.cli import agents, ars, bus, graph, history, read, research, signers, store, sync, write  # noqa: E402,F401,I001


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every StatedirError becomes its exit code and one JSON object or stderr line."""
    from typer import _click as click  # typer's own click

    from statedir import output

    args = sys.argv[1:] if argv is None else argv
    if os.environ.get("STATEDIR_FAULT"):
        from statedir import faults

        faults.arm(os.environ["STATEDIR_FAULT"])
    for stream in (sys.stdout, sys.stderr):  # undecodable argv bytes must never crash a print
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure:
            reconfigure(errors="backslashreplace")
    as_json = "--json" in args
    try:
        if any("\x00" in a for a in args):  # argv never holds NUL; callers of main() might
            raise InvalidValue("an argument contains a NUL byte")
        named = [a for a in args[:1] if a in COMMANDS or a in GROUPS]
        # Shell completion is typer's own, built only when no command is named (the top-level
        # help, --show-completion, a shell asking through _STATEDIR_COMPLETE): a command's
        # start-up stays the cost of that one command.
        result = build(named or None, completion=not named)(args=args, prog_name="statedir", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except StatedirError as exc:
        code = output.error(exc, as_json)
    except click.exceptions.NoArgsIsHelpError as exc:
        # Bare `statedir` (or `statedir bus`) is a person asking what is there: the help on
        # stdout and exit 0, as `statedir --help` does; never an error line.
        print(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
        code = 0
    except click.exceptions.UsageError as exc:
        code = output.error(InvalidValue(exc.format_message().strip().replace("\n", " ")), as_json)
        code = BAD_INPUT
    except typer.Exit as exc:
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("aborted\n")
        code = 130
    except click.exceptions.ClickException as exc:
        code = output.error(InvalidValue(exc.format_message()), as_json)
    sys.stdout.flush()
    return code


def entry() -> None:
    try:
        code = main()  # which flushes stdout last, so a closed pipe surfaces here
    except BrokenPipeError:  # the reader went away (`statedir log | head`): stop quietly, as git does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        code = 141  # 128 + SIGPIPE, the status a shell gives a command its pipe closed
    sys.exit(code)

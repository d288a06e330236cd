"""The `statedir` command line: thin typer callbacks over statedir.api; one error handler."""
# Lazy imports: statedir, api.places, api.sync_unmoved, cli.direct, cli.registry, cli.render, cli.words, commands.table, errors,
#   hints, typer: imported by the command that uses them: `statedir COMMAND` loads this module for any of its commands, a
#   plain call loads no typer, and a no-op sync answers before the errors, the hints or the words load (docs/cli-startup.md).
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (`statedir --version` loads nothing)
if TYPE_CHECKING:
    from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every StatedirError becomes its exit code and one JSON object or stderr line."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # answered before anything else is loaded (argument_checks: typing, pathlib)
        from statedir import __version__

        print(f"statedir {__version__}")
        return 0
    if args[:1] == ["sync"] and args[1:] in ([], ["--json"]):
        try:
            found = _unmoved_sync()
            if found is not None:  # nothing moved since the last sync: its module, the store and the sync stay unloaded
                return _say_unmoved(found, "--json" in args)
        except KeyboardInterrupt:  # ^C during its ls-remote: as _main says it
            sys.stderr.write("aborted\n")
            return 130
    from statedir.cli.words import CLI
    from statedir.hints import WORDS

    words = WORDS.set(CLI)  # refusals name the flags (`--topic`) and say their next steps as command lines
    streams = _escaped("--json" in args)
    try:
        return _main(args)
    finally:
        WORDS.reset(words)
        sys.stdout, sys.stderr = streams


def _escaped(as_json: bool) -> tuple[Any, Any]:
    """Put the streams a command prints on in place; returns the ones to put back. What a person
    reads arrives with its control characters escaped (text from another machine is never a
    terminal command; --json's document is JSON, which escapes its own), and undecodable argv
    bytes never crash a print."""
    from statedir.cli.render import Escaping

    streams = sys.stdout, sys.stderr
    if not as_json:
        sys.stdout = Escaping(sys.stdout)  # type: ignore[assignment]
    sys.stderr = Escaping(sys.stderr)  # type: ignore[assignment]
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure:
            reconfigure(errors="backslashreplace")
    return streams


def _say_unmoved(found: dict[str, Any], as_json: bool) -> int:
    """A no-op sync's answer, printed as `main` prints the whole sync's (on the same streams),
    with nothing else of the CLI loaded."""
    from statedir.cli import render

    streams = _escaped(as_json)
    try:
        render.done(found, as_json)
        sys.stdout.flush()
    finally:
        sys.stdout, sys.stderr = streams
    return 0


def _main(args: list[str]) -> int:
    os.environ.setdefault("TYPER_USE_RICH", "0")  # plain help and errors; rich costs start-up time
    from statedir.cli import render
    from statedir.errors import InvalidValue, StatedirError

    if os.environ.get("STATEDIR_FAULT"):
        from statedir.api import places

        places.arm_faults(os.environ["STATEDIR_FAULT"])
    as_json = "--json" in args
    # The except clauses below name typer's errors through _typer(), evaluated only when an exception
    # gets that far: a call read without typer never loads it.
    stdout = sys.stdout
    try:
        if any("\x00" in a for a in args):  # argv never holds NUL; callers of main() might
            raise InvalidValue("an argument contains a NUL byte")
        result = _run(args)
        code = result if isinstance(result, int) else 0
    except StatedirError as exc:
        code = render.error(exc, as_json)
    except _exit() as exc:  # a command's own exit status (the research ledger's flat refusal)
        code = exc.code
    except _typer().TyperException as exc:  # typer's usage errors (click's, under typer's public base)
        code = _usage_error(exc, as_json)
    except _typer().Exit as exc:
        code = exc.exit_code
    except (_typer().Abort, KeyboardInterrupt):  # a confirmation declined, ^C
        sys.stderr.write("aborted\n")
        code = 130
    except SystemExit:
        if sys.stdout is not stdout:  # typer met a closed pipe, wrapped stdout and exits 1:
            raise BrokenPipeError from None  # ... a reader going away is one exit status, 141, every time
        raise
    sys.stdout.flush()
    return code


def _run(args: list[str]) -> object:
    """The named command called straight from argv where `direct` reads the call (no typer),
    else the app typer builds of the commands the call needs."""
    # A person watching: a wait for the store lock must not look like a hang (the short path above takes none).
    if sys.stderr.isatty():
        from statedir.api import places

        places.on_lock_wait(lambda limit: sys.stderr.write(
            f"waiting for the store lock (another statedir command is writing; giving up after {limit:g} s)\n"))
    from statedir.cli.registry import TABLE, build, load

    named = [a for a in args[:1] if a in TABLE]
    if named and "_STATEDIR_COMPLETE" not in os.environ:
        from statedir.cli import direct

        load(named)
        function, rest = _plain(named[0], args[1:])
        if function is not None:
            kwargs = direct.parse(function, rest)
            if kwargs is not None:
                return function(**kwargs)
    # Shell completion is typer's own, built only when no command is named (the top-level
    # help, --show-completion, a shell asking through _STATEDIR_COMPLETE): a command's
    # start-up stays the cost of that one command.
    return build(named or None, completion=not named)(args=args, prog_name="statedir", standalone_mode=False)


def _unmoved_sync() -> dict[str, Any] | None:
    """A plain `sync`'s result where nothing moved since the last one (statedir.api.sync_unmoved), else None."""
    from statedir.api import sync_unmoved

    if "_STATEDIR_COMPLETE" in os.environ:
        return None
    try:
        cwd = os.getcwd()
    except OSError:  # the current folder is gone: the whole command says so
        return None
    return sync_unmoved.answer(os.environ.get("STATEDIR_STORE"), cwd, os.environ)


def _plain(name: str, rest: list[str]) -> tuple[Any, list[str]]:
    """The function a call names and the words for its parameters, where `direct` may read them: a
    command without typer settings (a command class) of its own, or a group's declared command
    (`bus set ...`, `signers add ...`); else None. A command class that words only typer's refusals
    (research's flat errors, marked `errors_only`) changes no call direct reads: direct leaves
    every call typer would refuse to typer."""
    from statedir.cli.registry import COMMANDS, SUBCOMMANDS

    if name in COMMANDS:
        function, settings = COMMANDS[name]
        plain = not set(settings) - {"cls"} and ("cls" not in settings or getattr(settings["cls"], "errors_only", False))
        return (function if plain else None), rest
    group = SUBCOMMANDS.get(name, {})
    if rest and rest[0] in group:
        return group[rest[0]], rest[1:]
    return None, rest


def _typer() -> Any:
    """typer (its exceptions): loaded only when an exception needs naming."""
    import typer

    return typer


def _exit() -> type[Any]:
    """statedir's own exit status of a command (loaded only when an exception needs naming)."""
    from statedir.commands.table import Exit

    return Exit


def _usage_error(exc: Any, as_json: bool) -> int:
    """A call typer could not read: its message (and the command's usage), exit 2. A bare
    `statedir` (or `statedir bus`) is a person asking what is there: its help on stdout and
    exit 0, as `statedir --help` does; never an error line."""
    from statedir.cli import render
    from statedir.errors import BAD_INPUT, InvalidValue

    context = getattr(exc, "ctx", None)  # where typer was reading: a usage error's command
    message = exc.format_message()
    if context is not None and message == context.get_help():  # no arguments: the help, said as an error
        print(message)
        return 0
    usage = context.get_usage() if context is not None else None
    render.error(InvalidValue(message.strip().replace("\n", " "), **({"usage": usage} if usage else {})), as_json)
    if usage and not as_json:  # what the command takes, and where to read more, as git and click do
        sys.stderr.write(f"{usage}\nTry '{context.command_path} --help' for help.\n")
    return BAD_INPUT


def entry() -> None:
    try:
        code = main()  # which flushes stdout last, so a closed pipe surfaces here
    except BrokenPipeError:  # the reader went away (`statedir log | head`): stop quietly, as git does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        code = 141  # 128 + SIGPIPE, the status a shell gives a command its pipe closed
    if not _LEAVE_TO_PYTHON & sys.modules.keys():
        # Nothing that needs the interpreter's teardown was loaded (no threads, no atexit work, no
        # temporary files, no typer): skip it, a module at a time, several ms of a transition.
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            code = code or 141
        os._exit(code)
    sys.exit(code)


# Modules whose presence means the process may have threads to wait for, atexit handlers or
# weakref finalizers to run (temporary directories, log handlers) or open files to flush at exit.
_LEAVE_TO_PYTHON = frozenset({"threading", "atexit", "weakref", "logging", "tempfile", "multiprocessing",
                              "concurrent", "asyncio", "typer", "click", "ruamel", "git", "pygit2", "mcp"})

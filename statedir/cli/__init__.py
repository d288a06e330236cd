"""The `statedir` command line: thin typer callbacks over statedir.api; one error handler."""
from __future__ import annotations

import os
import sys

from statedir.errors import BAD_INPUT, InvalidValue, StatedirError


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every StatedirError becomes its exit code and one JSON object or stderr line."""
    from statedir.argument_checks import CLI_WORDING

    wording = CLI_WORDING.set(True)  # refusals name the flags (`--topic`), not the API's arguments
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    finally:
        CLI_WORDING.reset(wording)


def _main(args: list[str]) -> int:
    if args == ["--version"]:  # answered before typer is loaded
        from statedir import __version__

        print(f"statedir {__version__}")
        return 0
    os.environ.setdefault("TYPER_USE_RICH", "0")  # plain help and errors; rich costs start-up time
    import typer
    from typer import _click as click  # typer's own click

    from statedir.cli import render
    from statedir.cli.registry import TABLE, build

    if os.environ.get("STATEDIR_FAULT"):
        from statedir import faults

        faults.arm(os.environ["STATEDIR_FAULT"])
    for stream in (sys.stdout, sys.stderr):  # undecodable argv bytes must never crash a print
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure:
            reconfigure(errors="backslashreplace")
    as_json = "--json" in args
    if sys.stderr.isatty():  # a person watching: a wait for the store lock must not look like a hang
        from statedir.store import locking

        locking.ON_WAIT.set(lambda limit: sys.stderr.write(
            f"waiting for the store lock (another statedir command is writing; giving up after {limit:g} s)\n"))
    try:
        if any("\x00" in a for a in args):  # argv never holds NUL; callers of main() might
            raise InvalidValue("an argument contains a NUL byte")
        named = [a for a in args[:1] if a in TABLE]
        # Shell completion is typer's own, built only when no command is named (the top-level
        # help, --show-completion, a shell asking through _STATEDIR_COMPLETE): a command's
        # start-up stays the cost of that one command.
        result = build(named or None, completion=not named)(args=args, prog_name="statedir", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except StatedirError as exc:
        code = render.error(exc, as_json)
    except click.exceptions.NoArgsIsHelpError as exc:
        # Bare `statedir` (or `statedir bus`) is a person asking what is there: the help on
        # stdout and exit 0, as `statedir --help` does; never an error line.
        print(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
        code = 0
    except click.exceptions.UsageError as exc:
        usage = exc.ctx.get_usage() if exc.ctx is not None else None
        render.error(InvalidValue(exc.format_message().strip().replace("\n", " "),
                                  **({"usage": usage} if usage else {})), as_json)
        if usage and not as_json:  # what the command takes, and where to read more, as git and click do
            command = exc.ctx.command_path if exc.ctx is not None else "statedir"
            sys.stderr.write(f"{usage}\nTry '{command} --help' for help.\n")
        code = BAD_INPUT
    except typer.Exit as exc:
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("aborted\n")
        code = 130
    except click.exceptions.ClickException as exc:
        code = render.error(InvalidValue(exc.format_message()), as_json)
    except SystemExit:
        if isinstance(sys.stdout, click.utils.PacifyFlushWrapper):  # click met a closed pipe and exits 1:
            raise BrokenPipeError from None  # ... a reader going away is one exit status, 141, every time
        raise
    sys.stdout.flush()
    return code


def entry() -> None:
    try:
        code = main()  # which flushes stdout last, so a closed pipe surfaces here
    except BrokenPipeError:  # the reader went away (`statedir log | head`): stop quietly, as git does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        code = 141  # 128 + SIGPIPE, the status a shell gives a command its pipe closed
    sys.exit(code)

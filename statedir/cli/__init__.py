"""The `statedir` command line: thin typer callbacks over statedir.api; one error handler."""
from __future__ import annotations

import os
import sys

os.environ.setdefault("TYPER_USE_RICH", "0")  # plain help and errors; rich costs start-up time

import typer  # noqa: E402

from statedir.errors import BAD_INPUT, InvalidValue, StatedirError  # noqa: E402

app = typer.Typer(
    name="statedir",
    help="Pipeline state as a git-friendly directory of YAML files: every transition one validated git commit.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

from statedir.cli import read, store, write  # noqa: E402,F401  (commands register on `app`)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every StatedirError becomes its exit code and one JSON object or stderr line."""
    from statedir import output
    from typer import _click as click  # typer's own click

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
        result = app(args=args, prog_name="statedir", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except StatedirError as exc:
        code = output.error(exc, as_json)
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
    sys.exit(main())

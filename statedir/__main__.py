import sys

if len(sys.argv) == 6 and sys.argv[1] == "merge-driver":
    # git runs the driver once per file it merges: skip the CLI's start-up (typer, click).
    from statedir.merge.driver import main

    sys.exit(main(sys.argv[2:]))

from statedir.cli import entry  # noqa: E402

entry()

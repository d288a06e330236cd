"""Store-level commands: init, validate, demo."""
# Lazy imports: os, api.documents, api.texts, cli.common, cli.demo: imported by the command that uses them: `statedir
#   COMMAND` loads this module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

from statedir.cli.common import JsonOpt, StoreOpt
from statedir.cli.registry import app
from statedir.cli.render import emit_json, unescaped, warn
from statedir.commands.params import Argument, Option


@app.command()
def init(directory: Annotated[Path, Argument(help="Where the store goes.")] = Path("state"),
         branch: Annotated[Optional[str], Option(
             "--branch", metavar="NAME",
             help="Commit the store to branch NAME, never to the branch you work on: NAME is checked out in "
                  "the directory as a linked work tree that your work tree ignores, and every command finds it. "
                  "Where NAME exists already (a clone), it is checked out again. See docs/branch.md.")] = None,
         new_store: Annotated[bool, Option(
             "--new-store", help="Make a store on the branch you work on even where a remote's branch holds one "
                                 "(without it, init refuses there and names that branch: checking it out is what "
                                 "a fresh clone needs).")] = False,
         store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Make a store (git init first where needed); an existing store is left as it is.

    Every transition is a commit on the branch you work on; with --branch NAME they go to a
    branch of their own instead (for a feature branch whose pull request should hold only your work).
    """
    from statedir.api import documents

    result = documents.init(None, directory=directory, branch=branch, new_store=new_store, store=store).value
    if json:
        emit_json(result)
    elif result["created"]:
        on = f" on branch {result['branch']}" if "branch" in result else ""
        if result.get("git_init"):
            print(f"ok  {result['git_init']} was in no git repository: ran `git init` there")
        print(f"ok  initialized statedir store in {result['store']}{on}  [{result['commit'][:10]}]")
    elif result.get("attached"):
        print(f"ok  checked out the store's branch {result['branch']} at {result['store']}")
    elif result.get("repaired"):
        print(f"ok  {result['store']} is already a statedir store; {'; '.join(result['repaired'])}")
    else:
        print(f"ok  {result['store']} is already a statedir store; nothing changed")
    for message in result.get("warnings", []):
        warn(message)  # on stderr, with --json too (as `done` does)


@app.command()
def validate(files: Annotated[Optional[list[Path]], Argument(help="Files to check; default: every store file.")] = None,
             schema: Annotated[Optional[str], Option(
                 "--schema", help="Check the named files against this schema (e.g. template), wherever they are.")] = None,
             skip_outside_stores: Annotated[bool, Option(
                 "--skip-outside-stores", help="Pass over named files that are in no store (the pre-commit hook's mode).")] = False,
             verbose: Annotated[bool, Option(
                 "--verbose", "-v", help="End with a summary line (files checked, problems), as on a terminal.")] = False,
             store: StoreOpt = None, json: JsonOpt = False) -> int:
    """Check files against their schemas; exit 1 with file::$.path: message lines on any failure.

    Silent on success in a pipe (the pre-commit hook); on a terminal, or with -v, a summary line
    follows. Store files are named relative to the current directory, so a terminal can open them.
    """
    import os

    from statedir.api import documents
    from statedir.cli.common import store_path

    documents.check_schema(schema)
    root: Optional[Path] = None
    if files:
        problems, checked = documents.validate_files(files, schema, skip_outside_stores), len(files)
    else:
        from statedir.api import texts
        from statedir.cli.common import warn_unregistered

        root = store_path(store)
        if (root / "statedir.yaml").is_file():
            warn_unregistered(root.resolve())
        bar = texts.progress_bar("validating", unescaped(sys.stderr))  # its redraw is ours
        counted = [0]

        def count(done: int, total: int) -> None:
            counted[0] = total
            if bar is not None:
                bar(done, total)

        try:
            problems = documents.validate_store(root, progress=count)
        finally:
            if bar is not None:
                bar.close()
        checked = counted[0]
    if json:
        emit_json(documents.validated(problems))  # the contract's shape
    else:
        for problem in problems:
            # store-relative names become names relative to here: clickable in a terminal
            print(problem if root is None else f"{os.path.relpath(root / problem.file)}::{problem.path}: {problem.message}")
        if verbose or sys.stdout.isatty():
            from statedir.api import texts

            held = sorted((root / "templates").glob("*.yaml")) if root is not None else []
            named = [f for f in files or [] if schema == "template" or f.parent.name == "templates"]
            for note in texts.flow_notes([(f, str(f)) for f in named] +
                                                [(f, os.path.relpath(f)) for f in held]):
                print(note)
            bad = len({p.file for p in problems})
            print(f"{checked} file{'s' * (checked != 1)} checked: " + (
                f"{len(problems)} problem{'s' * (len(problems) != 1)} in {bad} file{'s' * (bad != 1)}" if problems
                else "all valid"))
    return 1 if problems else 0


@app.command()
def demo(keep: Annotated[Optional[Path], Option("--keep", help="Build the demo store here and keep it.")] = None,
         json: JsonOpt = False) -> None:
    """Drive an example academic pipeline in a throwaway repository, then show the dashboard and log."""
    from statedir.cli import demo as demo_mod

    demo_mod.run(keep, as_json=json)

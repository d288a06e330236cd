"""The merge driver's registration: the store's `.gitattributes` names it, the repository's git
config says how to run it. git never copies config with a clone, and silently falls back to a
line merge when a named driver is not configured: so `init` registers it, `doctor` reports a
missing or stale registration (and `--fix` writes it), and every command warns while it is missing.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from statedir import git

DRIVER = "statedir"  # the name store.GITATTRIBUTES gives it
NAME = "statedir: merges store files by their schemas' x-merge rules"
_SECTION = f'[merge "{DRIVER}"]'
MISSING_WARNING = ("the store's .gitattributes names the statedir merge driver, but this repository's git config "
                   "does not register it (a fresh clone?): git would merge store files line by line. "
                   "Run `statedir doctor --fix`")


def command() -> str:
    """The driver command git runs: this interpreter, by absolute path, running statedir."""
    return f"{shlex.quote(sys.executable)} -m statedir merge-driver %O %A %B %P"


def configured(worktree: Path) -> str | None:
    """The registered driver command, or None. The repository's config file is read first (no
    git process in the common case); only where it has no such section is git asked."""
    try:
        text = (git.common_dir(git.git_dir(worktree)) / "config").read_text(errors="replace")
    except OSError:
        text = ""
    if _SECTION not in text:
        proc = git.run(worktree, "config", "--get", f"merge.{DRIVER}.driver", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None
    proc = git.run(worktree, "config", "--get", f"merge.{DRIVER}.driver", check=False)
    return proc.stdout.decode().strip() or None


def stale(value: str) -> bool:
    """A registered command whose program is gone (a removed virtualenv, an old interpreter)."""
    try:
        program = shlex.split(value)[0]
    except (ValueError, IndexError):
        return True
    if "/" not in program:
        return False  # found on PATH when git runs it
    return not os.access(program, os.X_OK)


def register(worktree: Path) -> None:
    """Write the driver into the repository's git config (replacing a stale one)."""
    git.run(worktree, "config", f"merge.{DRIVER}.name", NAME)
    git.run(worktree, "config", f"merge.{DRIVER}.driver", command())


def names_driver(root: Path) -> bool:
    """Whether the store's .gitattributes assigns the statedir merge driver."""
    try:
        return f"merge={DRIVER}" in (root / ".gitattributes").read_text(errors="replace")
    except OSError:
        return False


def warning(root: Path, worktree: Path) -> str | None:
    """The once-per-command warning while the attribute is there and the config is not."""
    if not names_driver(root) or configured(worktree) is not None:
        return None
    return MISSING_WARNING

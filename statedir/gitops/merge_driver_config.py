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

from statedir.gitops import git
from statedir.hints import DOCTOR_FIX as FIX
from statedir.hints import said

DRIVER = "statedir"  # the name store.GITATTRIBUTES gives it
NAME = "statedir: merges store files by their schemas' x-merge rules"
_SECTION = f'[merge "{DRIVER}"]'
MISSING_WARNING = ("the store's .gitattributes names the statedir merge driver, but this repository's git config "
                   "does not register it (a fresh clone?): git would merge store files line by line. "
                   "Run `{hint}`")
UNSAFE_WARNING = ("this repository's git config runs the statedir merge driver without isolated mode (-I), so "
                  "a `statedir/` folder committed at the repository's top would run as code on a merge. "
                  "Run `{hint}`")


def command() -> str:
    """The driver command git runs: this interpreter, by absolute path, in isolated mode (-I).
    git runs a driver in the work tree's top folder, and a plain `python -m` puts that folder
    first on sys.path: a `statedir/` package anyone committed there would be imported instead of
    the installed one. -I keeps the current folder, PYTHON* variables and user site off the path."""
    return f"{shlex.quote(sys.executable)} -I -m statedir merge-driver %O %A %B %P"


def unsafe(value: str) -> bool:
    """A registration statedir wrote before isolated mode (`python -m statedir merge-driver`),
    which imports a `statedir/` package from the work tree: replaced wherever it is seen."""
    try:
        words = shlex.split(value)
    except ValueError:
        return False
    return (len(words) >= 4 and words[1:4] == ["-m", "statedir", "merge-driver"])


def configured(worktree: Path) -> str | None:
    """The registered driver command, or None. Where the repository's own config file sets it
    plainly, that file is the answer (no git process per command); anything else asks git."""
    try:
        text = (git.common_dir(git.git_dir(worktree)) / "config").read_text(errors="replace")
    except OSError:
        text = ""
    value = _set_plainly(text)
    if value is not _ASK_GIT:
        return value  # type: ignore[return-value]
    proc = git.run(worktree, "config", "--get", f"merge.{DRIVER}.driver", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


_ASK_GIT = object()


def said_by_file(text: str) -> bool:
    """Whether the repository's config file `text` alone says what `configured` answers (the driver
    set plainly, or plainly not set): else git is asked, and its answer may come from elsewhere."""
    return _set_plainly(text) is not _ASK_GIT


def _set_plainly(text: str) -> str | None | object:
    """The driver as `git config --get` prints it, read from the repository's config file where
    that is certain: our section sets it with a plain value (no quotes, escapes, comments,
    continuations or control characters) and nothing outranks the file (no include, no
    per-worktree config, no config given through the environment). Else _ASK_GIT."""
    if any(os.environ.get(name) for name in ("GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")):
        return _ASK_GIT
    if "\\" in text or "\r" in text or "worktreeconfig" in text.lower():
        return _ASK_GIT
    value: str | None | object = _ASK_GIT
    ours = False
    for line in text.split("\n"):
        stripped = line.strip(" \t")
        if stripped.startswith("["):
            lowered = stripped.lower()
            if "include" in lowered or (stripped != _SECTION and DRIVER in lowered):
                return _ASK_GIT  # an include, or our section written another way
            if not stripped.endswith("]") or stripped.count("]") != 1:
                return _ASK_GIT  # a key on the header's line
            ours = stripped == _SECTION
        elif ours and stripped and stripped[0] not in "#;":
            key, equals, raw = stripped.partition("=")
            if key.strip(" \t").lower() != "driver":
                continue
            if not equals or any(c in '"#;' or not (c.isprintable() or c == "\t") for c in raw):
                return _ASK_GIT
            value = raw.strip(" \t").replace("\t", " ") or None
    return value


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
    """The once-per-command warning while the attribute is there and the config is not. A
    registration of statedir's own older, unsafe form is rewritten on the spot (it is ours)."""
    if not names_driver(root):
        return None
    value = configured(worktree)
    if value is None:
        return said(MISSING_WARNING, FIX)
    if unsafe(value):
        try:
            register(worktree)
        except git.GitError:  # a read-only config: say how to fix it instead
            return said(UNSAFE_WARNING, FIX)
    return None

"""A state commit's message: written (the one-line summary, the reason as its body, the
`Statedir-*` trailers) and read back (`log`: the state commits touching a path, from their trailers).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from statedir import request_ids
from statedir.gitops import identity
from statedir.gitops.git import head, run

TRAILERS = ("Statedir-Run", "Statedir-Actor", "Statedir-Action")
REQUEST_TRAILER = "Statedir-Request"  # what was asked, as compact JSON: {"at", "args", "reason"}


def _printable(value: str) -> str:
    """One line git keeps as it is: control characters (a NUL, a newline that would forge a
    trailer) written as escapes."""
    return "".join(c if c >= " " and c != "\x7f" else f"\\x{ord(c):02x}" for c in value)


def _body_line(line: str) -> str:
    """A line of the reason in the body: printable, and never `---` at its start, which ends the
    message for `git interpret-trailers` and `git am` (the reason's own lines above it would read
    as the commit's trailers there)."""
    line = _printable(line.rstrip())
    return "\\" + line if line.startswith("---") else line


def message(summary: str, run_id: str, actor: str, action: str, *, reason: str | None = None,
            request: dict[str, Any] | None = None, trailers: dict[str, str] | None = None,
            request_id: str | None = None) -> str:
    """A state commit's message: the one-line summary, the reason as its body, then the trailers.

    `request` (what was asked: the time, the arguments, the reason, the request id) is kept as
    one line of compact JSON in `Statedir-Request`, so `statedir verify` can decide the transition
    again. Every commit names its own `Statedir-Request-Id` (a fresh one unless given), so two
    transitions made alike in one second are never one commit.
    """
    identity.check_name(actor, "actor")  # a name, never a line of its own: refused before anything is written
    lines = _printable(" ".join(summary.split()))
    # as `git commit` would clean it (blank lines run together), so every way of committing
    # writes the same message and a crashed writer's journal recognises its commit (landed)
    body = "\n".join(_body_line(line) for line in (reason or "").strip().splitlines())
    body = re.sub(r"\n{3,}", "\n\n", body)
    text = f"{lines}\n\n" + (f"{body}\n\n" if body else "")
    text += f"Statedir-Run: {_printable(run_id)}\nStatedir-Actor: {_printable(actor)}\nStatedir-Action: {action}\n"
    for key, value in (trailers or {}).items():
        text += f"{key}: {_printable(value)}\n"
    text += f"{request_ids.TRAILER}: {_printable(request_id or request_ids.new())}\n"
    if request is not None:
        # Key order kept: a replay writes the arguments in the order they were given.
        encoded = json.dumps(request, ensure_ascii=True, separators=(",", ":"), default=str)
        text += f"{REQUEST_TRAILER}: {encoded}\n"
    return text


_FIELDS = ("%H", "%cd", "%(trailers:key=Statedir-Run,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Actor,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Action,valueonly,separator=%x2C)", "%s")
UTC_DATE = "--date=format-local:%Y-%m-%dT%H:%M:%SZ"  # with TZ=UTC: git writes the times in UTC


def log(worktree: Path, pathspec: str) -> list[dict[str, str]]:
    """State commits touching `pathspec`, newest first, read from their trailers."""
    if not head(worktree):
        return []
    fmt = "%x1f".join(_FIELDS) + "%x1e"
    out = run(worktree, "log", UTC_DATE, f"--format={fmt}", "--", pathspec, env={"TZ": "UTC"}).stdout.decode(
        errors="replace")
    entries = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != len(_FIELDS) or not fields[2]:
            continue
        sha, time, run_id, actor, action, summary = fields
        entries.append({"commit": sha, "time": time, "actor": actor, "action": action,
                        "run_id": run_id, "summary": summary})
    return entries

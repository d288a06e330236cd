"""Rendering results and errors: one JSON document with --json, short lines for people."""
from __future__ import annotations

import json
import os
import sys
from contextvars import ContextVar
from typing import Any

from statedir.errors import StatedirError


def _color(text: str, code: str, stream: Any) -> str:
    if os.environ.get("NO_COLOR") or not getattr(stream, "isatty", lambda: False)():
        return text
    return f"\033[{code}m{text}\033[0m"


# What a command prints while a long-lived caller runs it in-process (`cli.common.serving`: the
# MCP server): handed back to that caller, never written to the process's stdout (the protocol's).
SINK: ContextVar[list[str] | None] = ContextVar("statedir_output", default=None)


def _write(text: str) -> None:
    sink = SINK.get()
    if sink is None:
        sys.stdout.write(text)
    else:
        sink.append(text)


def emit_json(value: Any) -> None:
    """One JSON document: indented for a person at a terminal; one compact line for a program
    reading a pipe or the server (fewer tokens for an agent, and json's C encoder, ten times
    faster on a long audit log than the indenting one)."""
    if SINK.get() is None and sys.stdout.isatty():
        text = json.dumps(value, ensure_ascii=False, indent=2)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    _write(text + "\n")


def say(text: str, end: str = "\n") -> None:
    """A command's plain-text output where a program may read it (a report, a file's text): on
    stdout, or handed to the server running the command."""
    _write(text + end)


SAID: set[str] = set()  # warnings already on stderr in this process: each is said once


def warn(message: str) -> None:
    """A warning for people, on stderr (stdout stays the command's output), once per process."""
    if message in SAID:
        return
    SAID.add(message)
    sys.stderr.write(_color("warning", "33", sys.stderr) + f": {message}\n")


def done(result: dict[str, Any], as_json: bool) -> None:
    """What a mutating command prints on success."""
    if as_json:
        for message in result.get("warnings", []):
            warn(message)  # people watching an agent's stderr see it too
        emit_json(result)
        return
    line = result.get("summary", "done")
    commit = result.get("commit")
    print(_color("ok", "32", sys.stdout) + f"  {line}" + (f"  [{commit[:10]}]" if commit else ""))
    if result.get("warning"):
        print(_color("warning", "33", sys.stdout) + f"  {result['warning']}")
    checkpoint = result.get("checkpoint")
    if checkpoint and result.get("run_id"):
        print(f"    checkpoint open ({checkpoint.get('type')}, after stage {checkpoint.get('stage')}): "
              f"statedir confirm {result['run_id']}")
    for message in result.get("warnings", []):
        warn(message)


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    if not rows:
        return ""
    widths = {c: max(len(c), *(len(str(r.get(c) if r.get(c) is not None else "-")) for r in rows))
              for c in columns}
    lines = ["  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip()]
    for r in rows:
        lines.append("  ".join(str(r.get(c) if r.get(c) is not None else "-").ljust(widths[c])
                               for c in columns).rstrip())
    return "\n".join(lines)


def error(exc: StatedirError, as_json: bool) -> int:
    if as_json:
        emit_json(exc.as_json())
    else:
        sys.stderr.write(_color("error", "31", sys.stderr) + f": {exc.message} [{exc.code}]\n")
        if "moves" in exc.details and exc.details.get("run_id"):  # refused by a run's rules
            sys.stderr.write(f"    what is legal now: statedir next {exc.details['run_id']}\n")
    return exc.exit_code

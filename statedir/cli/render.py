"""Rendering results and errors: one JSON document with --json, short lines for people.

Everything a person's terminal is shown passes through `Escaping` (the CLI's stdout for a human
call, its stderr always): a topic, a reason or a file name from another machine is text, never
a terminal command, so control characters (ESC, CSI, BEL, CR, ...) and bidi overrides arrive as
escapes. statedir's own terminal codes (colour, a progress bar's redraw) go to `unescaped`.
"""
# Lazy imports: commands.document, json: imported by the command that uses them: `statedir COMMAND` loads this module
#   for any of its commands, and a plain call loads no typer (docs/cli-startup.md); a no-op `sync`'s line loads no json.
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a no-op sync's short path loads none)
if TYPE_CHECKING:
    from typing import Any

    from statedir.errors import StatedirError


# C0 but tab and newline, DEL, C1, and the marks that reorder or hide text (bidi embeddings,
# overrides, isolates and their marks): C0 written as \xNN, the rest as \uNNNN, which JSON and
# YAML read back as the same character where the text is one of their documents.
_CONTROLS = [*(c for c in range(0x20) if c not in (0x09, 0x0a)), *range(0x7f, 0xa0),
             0x061c, 0x200e, 0x200f, *range(0x202a, 0x202f), *range(0x2066, 0x206a)]
_ESCAPES = {c: (f"\\x{c:02x}" if c < 0x20 else f"\\u{c:04x}") for c in _CONTROLS}


def escaped(text: str) -> str:
    """`text` with every control character and bidi override written as an escape."""
    return text.translate(_ESCAPES)


class Escaping:
    """A text stream that writes what it is given `escaped`; the rest is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self.unescaped = stream

    def write(self, text: str) -> int:
        self.unescaped.write(escaped(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)


def unescaped(stream: Any) -> Any:
    """The stream under `Escaping`, for statedir's own terminal codes; any other stream as it is."""
    return stream.unescaped if isinstance(stream, Escaping) else stream


def _labelled(stream: Any, label: str, code: str, text: str) -> None:
    """`label` in colour where `stream` is a terminal that wants it, then `text` (escaped)."""
    if os.environ.get("NO_COLOR") or not getattr(stream, "isatty", lambda: False)():
        stream.write(label + text)
        return
    unescaped(stream).write(f"\033[{code}m{label}\033[0m")
    stream.write(text)


def emit_json(value: Any) -> None:
    """One JSON document: indented for a person at a terminal; one compact line for a program
    reading a pipe (statedir.commands.document.compact: the line the MCP server hands an agent)."""
    if sys.stdout.isatty():
        import json

        text = json.dumps(value, ensure_ascii=False, indent=2)
    else:
        from statedir.commands.document import compact

        text = compact(value)
    sys.stdout.write(text + "\n")


def say(text: str, end: str = "\n") -> None:
    """A command's plain-text output where a program may read it (a report, a file's text), on stdout."""
    sys.stdout.write(text + end)


SAID: set[str] = set()  # warnings already on stderr in this process: each is said once


def warn(message: str) -> None:
    """A warning for people, on stderr (stdout stays the command's output), once per process."""
    if message in SAID:
        return
    SAID.add(message)
    _labelled(sys.stderr, "warning", "33", f": {message}\n")


def done(result: dict[str, Any], as_json: bool) -> None:
    """What a mutating command prints on success."""
    if as_json:
        for message in result.get("warnings", []):
            warn(message)  # people watching an agent's stderr see it too
        emit_json(result)
        return
    line = result.get("summary", "done")
    commit = result.get("commit")
    _labelled(sys.stdout, "ok", "32", f"  {line}" + (f"  [{commit[:10]}]" if commit else "") + "\n")
    if result.get("warning"):
        _labelled(sys.stdout, "warning", "33", f"  {result['warning']}\n")
    checkpoint = result.get("checkpoint")
    if checkpoint and result.get("run_id"):
        print(f"    checkpoint open ({checkpoint.get('type')}, after stage {checkpoint.get('display') or checkpoint.get('stage')}): "
              f"statedir confirm {result['run_id']}")
    for message in result.get("warnings", []):
        warn(message)


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """Columns as wide as their widest cell, each cell `escaped` first so the escapes line up."""
    if not rows:
        return ""
    cells = [{c: escaped(str(r.get(c) if r.get(c) is not None else "-")) for c in columns} for r in rows]
    widths = {c: max(len(c), *(len(r[c]) for r in cells)) for c in columns}
    lines = ["  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip()]
    for r in cells:
        lines.append("  ".join(r[c].ljust(widths[c]) for c in columns).rstrip())
    return "\n".join(lines)


def error(exc: StatedirError, as_json: bool) -> int:
    if as_json:
        emit_json(exc.as_json())
    else:
        _labelled(sys.stderr, "error", "31", f": {exc.message} [{exc.code}]\n")
        if "moves" in exc.details and exc.details.get("run_id"):  # refused by a run's rules
            sys.stderr.write(f"    what is legal now: statedir next {exc.details['run_id']}\n")
    return exc.exit_code

"""What a tool call gives back (`Outcome`), and the command's --json document put in the tool's
words: its messages and warnings, and what blocks a move (`needs`), as the agent reads them. No MCP
SDK here."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statedir.mcp import outputs


@dataclass(frozen=True)
class Outcome:
    """What one call gives back: the command's document (what its --json prints), whether it
    failed, the command's exit code and the repository's HEAD after it."""

    text: str
    is_error: bool
    head: str | None
    exit_code: int = 0
    name: str = ""
    structured: dict[str, Any] | None = None  # the document as the tool's output schema says

    @property
    def line(self) -> str:
        """The result's text content: one line saying what the structured content holds (a
        refusal: its error document whole, for clients that show only the text of an error)."""
        if self.is_error or self.structured is None:
            return self.text
        return outputs.summary_line(self.name, self.structured)


def worded(doc: dict[str, Any], say: Callable[[str], str]) -> dict[str, Any]:
    """`doc` with its error message, its warnings and what blocks a move said by `say`."""
    out = dict(doc)
    if isinstance(out.get("error"), dict) and isinstance(out["error"].get("message"), str):
        out["error"] = {**out["error"], "message": say(out["error"]["message"])}
    elif isinstance(out.get("error"), str) and isinstance(out.get("message"), str):  # the research CLI's flat shape
        out["message"] = say(out["message"])
    if isinstance(out.get("warning"), str):
        out["warning"] = say(out["warning"])
    if isinstance(out.get("warnings"), list):
        out["warnings"] = [say(w) if isinstance(w, str) else w for w in out["warnings"]]
    return needs_worded(out, say)


def needs_worded(doc: Any, say: Any) -> Any:
    """`doc` with what blocks a move (each `needs` list, in a refusal's details or `next`'s
    blocked moves) in the tools' words: `(statedir revision)` names the tool `revision`."""
    if isinstance(doc, list):
        return [needs_worded(item, say) for item in doc]
    if not isinstance(doc, dict):
        return doc
    return {key: [say(n) if isinstance(n, str) else n for n in value] if key == "needs" and isinstance(value, list)
            else needs_worded(value, say) for key, value in doc.items()}


def is_document(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def is_error_document(text: str) -> bool:
    return _code_of(text) is not None


def _code_of(text: str) -> str | None:
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict):
        return str(error.get("code"))
    return str(error) if isinstance(error, str) else None

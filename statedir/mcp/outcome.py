"""What a tool call gives back (`Outcome`): the command's --json document, its messages, warnings
and what blocks a move (`needs`) already in the tools' words, said where they are made
(statedir.hints, statedir.mcp.wording.McpWords). No MCP SDK here."""
from __future__ import annotations

import json
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

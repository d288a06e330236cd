"""A command's result as it hands it back (`Document`): what its --json prints and its exit code,
serialised one way for the CLI's pipe and the MCP server's agent (`Document.text`). Imports only json."""
from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a no-op `sync --json` loads none)
if TYPE_CHECKING:
    from typing import Any


class Document:
    """A command's result: its --json document (a plain-text report: a string) and its exit code
    (a check that finds something, prerequisites not met: 1), or a plain-text report."""

    __slots__ = ("value", "code", "plain", "said")  # a plain class: a transition loads no dataclasses

    def __init__(self, value: Any, code: int = 0, *, plain: bool = False, said: tuple[str, ...] = ()) -> None:
        self.value = value
        self.code = code
        self.plain = plain  # the value is a plain-text report (research --report, signers' allowed-signers), not JSON
        self.said = said  # warnings for people besides the document's own (`runs`: a run unreadable)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What people watching are told (the CLI's stderr, the server's log): `said`, then the
        document's own `warnings`."""
        own = self.value.get("warnings", []) if isinstance(self.value, dict) else []
        return (*self.said, *(w for w in own if isinstance(w, str)))

    @property
    def text(self) -> str:
        """The document as one compact line (fewer tokens for an agent, and json's C encoder, ten
        times faster on a long audit log than the indenting one); a plain-text report as it is."""
        return self.value.strip() if self.plain else compact(self.value)

    def __repr__(self) -> str:
        return f"Document({self.value!r}, {self.code})"


def compact(value: Any) -> str:
    """A JSON document on one line, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

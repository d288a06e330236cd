"""The user's answers over MCP: a MANDATORY checkpoint's `confirm`, a FAIL-loop `resolve`, a
failure mode's `acknowledge` and a compliance block's `compliance --override` are the user's, so
the server asks the user (through elicitation) before such a call runs, and the call then records
the answer as the user's, come by elicitation. What question a call asks is
statedir.mcp.checkpoint_question's. No MCP SDK here."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from statedir.api import users_questions
from statedir.mcp import roles as roles_mod
from statedir.mcp.checkpoint_question import Question, question
from statedir.mcp.tools import Tool

ELICITED = "mcp-elicitation"  # the channel of a user's answer the server asked for (engine.attribution.CHANNELS)


def asks(tool: Tool, arguments: dict[str, Any]) -> Callable[..., Question | None] | None:
    """What makes the user's question for this call (None: the call answers nothing of the user's;
    a `compliance` call only where it overrides)."""
    if tool.path == ("compliance",) and not arguments.get("override"):
        return None
    if len(tool.path) != 1 or tool.path[0] not in users_questions.QUESTIONS:
        return None
    return functools.partial(question, tool.path[0])


def carried(t: Any, run: Any, tool: Tool, arguments: dict[str, Any], roles: tuple[str, ...]) -> None:
    """Refused where the role the call acts in may not carry the user's answer: before the user is asked."""
    carrier = roles_mod.acting(tool, arguments, roles).get(roles_mod.ACTOR) or roles[0]
    users_questions.carried(tool.path[0], t, run, carrier, ELICITED)


class UsersAnswer:
    """The served store for a call carrying the user's answer: its `confirm`, `resolve`,
    `acknowledge_mode` and `compliance` (an override) record the user's answer, come by
    elicitation (via the server's role, channel mcp-elicitation); everything else is the served
    store's own."""

    def __init__(self, sd: Any) -> None:
        self._sd = sd

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sd, name)

    def confirm(self, run_id: str, **kwargs: Any) -> Any:
        return self._sd.confirm(run_id, **{**kwargs, "answered_by": "user", "channel": ELICITED})

    def resolve(self, run_id: str, *args: Any, **kwargs: Any) -> Any:
        return self._sd.resolve(run_id, *args, **{**kwargs, "channel": ELICITED})

    def acknowledge_mode(self, run_id: str, *args: Any, **kwargs: Any) -> Any:
        return self._sd.acknowledge_mode(run_id, *args, **{**kwargs, "channel": ELICITED})

    def compliance(self, run_id: str, *args: Any, **kwargs: Any) -> Any:
        return self._sd.compliance(run_id, *args, **{**kwargs, "channel": ELICITED})

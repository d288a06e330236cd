"""A move `statedir next` asks the rules about (statedir.engine.next_moves), and who takes it."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import Template
from statedir.engine.transition_data import AT_WORK, Request, RunData, at_work

REASON = "(the user's decision)"  # the free text a trial gives where a move needs --reason


class Candidate:
    """One request to try: its command, actor and args as the Python API builds them; `shown`
    the enumerated arguments by their CLI/MCP name (None: not given); `vary` the shown
    arguments whose values one listed move gathers. (Written by hand, as decision's records
    are: dataclasses imports inspect, which `next` should not pay for.)"""

    __slots__ = ("command", "actor", "args", "shown", "vary", "reason", "optional")

    def __init__(self, command: str, actor: str, args: dict[str, Any], shown: dict[str, Any],
                 vary: tuple[str, ...] = (), reason: str | None = None, optional: tuple[str, ...] = ()) -> None:
        self.command, self.actor, self.args, self.shown, self.vary, self.reason = (
            command, actor, args, shown, vary, reason)
        self.optional = optional  # optional arguments that change what this move records, here

    def __repr__(self) -> str:
        return f"Candidate({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"

    def with_reason(self, reason: str) -> Candidate:
        """The same request with a recorded decision (--reason)."""
        return Candidate(self.command, self.actor, self.args, self.shown, self.vary, reason, self.optional)

    def request(self) -> Request:
        return Request(self.command, self.actor, self.args, self.reason)


def actor_for(t: Template, action: str, stage_id: str | None = None) -> str | None:
    """Who takes `action`: the stage's owner where the template lets owners, else the default
    actor, else the role with the fewest other powers that may (None: no role may)."""
    owner = t.owner(stage_id) if stage_id else None
    if owner and action in t.doc.get("owner_may", []) and t.may(owner, action, stage_id):
        return owner
    if t.may(t.default_actor(), action, stage_id):
        return t.default_actor()
    able = [role for role, spec in t.roles.items() if action in spec.get("may", [])]
    return min(able, key=lambda role: len(t.roles[role].get("may", [])), default=None)


def at_hand(t: Template, run: RunData, candidates: list[Candidate]) -> list[Candidate]:
    """`candidates` without the requests of an action that takes its stage only at work
    (transition_data.AT_WORK) for a stage that is not: the rules refuse each, needing nothing."""
    current = run.state.get("current_stage")
    return [c for c in candidates if c.command not in AT_WORK
            or at_work(t, run, c.args.get(AT_WORK[c.command]) if AT_WORK[c.command] else current)]

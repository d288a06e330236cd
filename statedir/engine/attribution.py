"""Whose transition it is: the role it is made in (`Statedir-Actor`) and, where the answer is the
user's (a MANDATORY checkpoint, anything the user does, the user's own commands such as a FAIL-loop
resolution or a failure-mode acknowledgement), the user's answer: recorded as the user's
(`actor: user`, `Statedir-Answered-By: user`, its channel), and when an agent carried it, via that
agent (`Statedir-Via: <role>`), never as the agent's.

`users_answer` is the one place a request becomes the user's answer (every command whose answer is
the user's calls it through the write path); `check` is the rule `verify` holds a recorded request's
identity to, and the write path holds each new one to. Pure functions over plain data."""
from __future__ import annotations

from typing import Any

from statedir.engine import wording
from statedir.engine.template import USER, Template
from statedir.engine.transition_data import Request, RunData
from statedir.errors import InvalidValue, PermissionDenied
from statedir.gitops.identity import TRAILERS, check_name

CHANNELS = ("cli", "mcp-elicitation", "web")
# The user's own commands: their answer whoever carries it (the FAIL-loop `resolve`, a failure
# mode's acknowledgement: the CLI's `acknowledge`, the action `acknowledge_mode`, apart from
# `verify --acknowledge`'s findings).
USERS_ACTIONS = frozenset({"resolve", "acknowledge_mode", "compliance_override"})


def is_users_answer(t: Template, run: RunData, req: Request) -> bool:
    """Whether the request carries the user's answer rather than the agent's own decision."""
    if req.actor == USER or req.action in USERS_ACTIONS or req.who.get("answered_by") == USER:
        return True
    return req.action == "confirm" and users_checkpoint(t, run) is not None


def users_checkpoint(t: Template, run: RunData) -> dict[str, Any] | None:
    """The open checkpoint only the user may answer: a MANDATORY one, or one held by a regressed
    quality until the user answers (the pipeline paused); None where none is open."""
    state, checkpoint = run.state, run.state.get("checkpoint")
    held = bool(checkpoint and checkpoint.get("held"))
    if not held and (state["pipeline_state"] != t.pipeline["awaiting"] or not checkpoint
                     or checkpoint["type"] != "MANDATORY"):
        return None
    return checkpoint


def users_answer(t: Template, run: RunData, req: Request) -> Request:
    """The request as it is recorded: the user's answer where it is one (actor `user`, answered_by
    `user`, the channel it came by, default `cli`; via the role that carried it, which must be one
    that may take the action), else the request unchanged. PERMISSION_DENIED for a carrier that may
    not relay it."""
    if not is_users_answer(t, run, req):
        return req
    who = {**req.who, "answered_by": USER, "channel": req.who.get("channel") or "cli"}
    if req.actor != USER:
        if not t.may(req.actor, req.action):
            allowed = [role for role in t.roles_that_may(req.action) if role != USER]
            asked = req.who.get("channel") == CHANNELS[1]  # over MCP no caller is the user: a relaying server asks
            own = (": a server started for that role asks the user" if asked
                   else ", or the user answers with {opt:actor} user")
            raise PermissionDenied(
                f"{req.actor} may not relay the user's answer (it may not {wording.doing(req.action)}); "
                + (f"{wording.either(allowed)} may relay it{own}" if allowed
                   else "the user answers it with {opt:actor} user"), actor=req.actor, action=req.action,
                allowed=[USER, *allowed])
        who["via"] = req.actor
    args = {**req.args, "answered_by": USER} if req.action == "confirm" else req.args
    out = Request(req.action, USER, args, req.reason, req.request_id, who)
    check(t, out)
    return out


def check(t: Template, req: Request) -> None:
    """A request's identity as the rules allow it: names that are names; `answered_by` only `user`,
    only on the user's own request (actor `user`) for an action the user may take, with a known
    channel; a channel or a via only with it; a via a role other than the user's that may take the
    action. INVALID_ID / INVALID_VALUE / PERMISSION_DENIED otherwise."""
    check_name(req.actor, "actor")
    unknown = sorted(set(req.who) - set(TRAILERS))
    if unknown:
        raise InvalidValue(f"a request names no {', '.join(unknown)}", unknown=unknown)
    for key in ("via", "person"):
        if req.who.get(key) is not None:
            check_name(req.who[key], "role" if key == "via" else "person")
    answered, channel, via = req.who.get("answered_by"), req.who.get("channel"), req.who.get("via")
    if answered is None:
        if channel is not None or via is not None:
            raise InvalidValue("a channel or a via names how the user's answer came: only with answered_by user")
        return
    if answered != USER:
        raise InvalidValue(f"answered_by is {USER} or nothing, not {answered!r}", answered_by=answered)
    if req.actor != USER:
        raise InvalidValue(f"the user's answer is recorded as the user's (actor {USER}), not as {req.actor}'s",
                           actor=req.actor)
    if not t.may(USER, req.action):
        allowed = t.roles_that_may(req.action, req.args.get("stage"))
        who = f"{wording.either(allowed)} may" if allowed else "no role of the template may"
        raise PermissionDenied(f"{USER} may not {wording.doing(req.action)}: no answer of the user's; {who}",
                               action=req.action, allowed=allowed)
    if channel not in CHANNELS:
        raise InvalidValue(f"the user's answer came by {' or '.join(CHANNELS)}, not {channel!r}", channel=channel)
    if via is not None and (via == USER or not t.may(via, req.action)):
        raise PermissionDenied(f"{via} may not relay the user's answer (it may not {wording.doing(req.action)})",
                               actor=via, action=req.action)

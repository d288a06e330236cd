"""A server that is one agent: the roles its callers act in (`statedir mcp --role`), fixed when it
starts. A tool call naming another role is PERMISSION_DENIED; `user` is never a caller's role (only
the elicitation form yields the user's answer, statedir.mcp.checkpoint_question); a write that names
no role acts in the server's first. No MCP SDK here."""
from __future__ import annotations

from typing import Any

from statedir.api.places import checked_name
from statedir.api.roles import USER, WRITER, either
from statedir.errors import InvalidValue, PermissionDenied
from statedir.mcp.tools import Tool

DEFAULT_ROLES = ("pipeline_orchestrator",)
ACTOR = "actor"  # the argument naming the role a write is made in


def chosen_roles(text: str) -> tuple[str, ...]:
    """The roles `--role a,b` names, checked: each a name (INVALID_ID), never `user` nor statedir
    itself (`state_tracker`), at least one."""
    roles = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not roles:
        raise InvalidValue("--role names no role: give one or more, comma-separated (e.g. pipeline_orchestrator)")
    for role in roles:
        checked_name(role, "role")
    if USER in roles:
        raise InvalidValue(f"--role {USER}: a server never acts as the user; the user's answers come only through "
                           "the client's elicitation form, which `confirm` puts to them", role=USER)
    if WRITER in roles:
        raise InvalidValue(f"--role {WRITER}: {WRITER} is statedir itself, the writer, and no caller acts as it; "
                           "start the server for the role its agent has (default pipeline_orchestrator)", role=WRITER)
    return roles


def acting(tool: Tool, arguments: dict[str, Any], roles: tuple[str, ...]) -> dict[str, Any]:
    """The call's arguments with the role it acts in: the server's first where a write names none;
    refused where it names a role the server does not act in, or the user."""
    if tool.read_only or ACTOR not in tool.input_schema["properties"]:
        return arguments
    actor = arguments.get(ACTOR)
    if actor is None:
        return {**arguments, ACTOR: roles[0]}
    checked_name(actor, "actor")
    if actor == USER:
        raise PermissionDenied(f"{tool.name} may not act as {USER}: an MCP caller never gives the user's answer; "
                               "the server asks the user through the client's form (confirm at a MANDATORY "
                               "checkpoint), or the user answers themselves", actor=actor, allowed=list(roles))
    if actor not in roles:
        raise PermissionDenied(f"this server acts as {either(list(roles))} only, not {actor}: an agent acting as "
                               f"{actor} needs a server started for that role", actor=actor, allowed=list(roles))
    return arguments


def with_roles(tool: Tool, schema: dict[str, Any], roles: tuple[str, ...]) -> dict[str, Any]:
    """A write tool's input schema with the roles it may act in as its `actor` argument's enum (the
    first its default)."""
    properties = schema.get("properties", {})
    if tool.read_only or ACTOR not in properties:
        return schema
    if len(roles) == 1:  # the server's one role, the only value (the default too): nothing more to say, 40 times
        actor: dict[str, Any] = {"type": "string", "enum": list(roles)}
    else:
        said = f"The role this call acts in: {either(list(roles))} (this server's; default {roles[0]})."
        actor = {**properties[ACTOR], "enum": list(roles), "default": roles[0], "description": said}
    return {**schema, "properties": {**properties, ACTOR: actor}}

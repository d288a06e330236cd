"""Answering in the browser (`statedir serve --answer`): the user's answers the web view may give
(an open checkpoint's, a FAIL-loop resolution), each a POST of a form that carries a per-session
CSRF token and the head the page was read at, made through statedir.api as the user's answer
through the web (`Statedir-Answered-By: user`, channel `web`) with the same rules, `expect` check
and refusals as the command. The same-origin check is the Guard's (statedir.web.guard).

An answer is one entry of ANSWERS: the `next` move it answers, the fields its form sends (each
from the move's allowed values, `reason` free text) and the API call it makes."""
from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from statedir.api import StateDir
from statedir.errors import InvalidValue

SESSION_COOKIE = "statedir_session"
MAX_BODY = 16_384  # bytes of a form: a few choices and a reason
MAX_FIELD = 4_000  # characters of one value (a reason)
Fields = dict[str, str]


@dataclass(frozen=True)
class Answer:
    """One kind of answer: the form's fields and the call that records it."""

    title: str  # the form's button
    fields: tuple[str, ...]  # what the form sends from the move's allowed values
    call: Callable[[StateDir, str, Fields, str], dict[str, Any]]
    reason: bool = False  # a free-text reason field (the override ladder may ask for one)
    command: str = ""  # the `next` move it answers, where not the action's own name
    marks: str = ""  # an argument the move lists that tells it from the command's other moves


def _confirm(sd: StateDir, run_id: str, f: Fields, expect: str) -> dict[str, Any]:
    return sd.confirm(run_id, next=f.get("next") or None, response=f.get("response") or None, actor="user",
                      answered_by="user", channel="web", expect=expect)


def _resolve(sd: StateDir, run_id: str, f: Fields, expect: str) -> dict[str, Any]:
    return sd.resolve(run_id, f.get("stage", ""), f.get("decision", ""), reason=f.get("reason") or None,
                      actor="user", channel="web", expect=expect)


def _acknowledge(sd: StateDir, run_id: str, f: Fields, expect: str) -> dict[str, Any]:
    return sd.acknowledge_mode(run_id, f.get("stage", ""), f.get("mode", ""), f.get("answer", ""),
                               reason=f.get("reason") or None, actor="user", channel="web", expect=expect)


def _compliance_override(sd: StateDir, run_id: str, f: Fields, expect: str) -> dict[str, Any]:
    return sd.compliance(run_id, f.get("stage", ""), override=True, reason=f.get("reason") or None, actor="user",
                         channel="web", expect=expect)


ANSWERS = {
    "confirm": Answer("Answer the checkpoint", ("next", "response"), _confirm),
    "resolve": Answer("Record the resolution", ("stage", "decision"), _resolve, reason=True),
    "acknowledge": Answer("Answer the failure mode", ("stage", "mode", "answer"), _acknowledge, reason=True),
    "compliance_override": Answer("Acknowledge the compliance block", ("stage",), _compliance_override, reason=True,
                                  command="compliance", marks="override"),
}


def _answering(move: dict[str, Any]) -> tuple[str, Answer] | None:
    """The answer a `next` move is (its action and entry), or None: not the user's to answer here."""
    for action, answer in ANSWERS.items():
        if (answer.command or action) == move["command"] and (not answer.marks or answer.marks in move["args"]):
            return action, answer
    return None


def forms(moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer forms a run's page shows: one per `next` move the web view may answer, each
    with its fields' choices (the values the template allows now)."""
    out = []
    for move in moves:
        found = _answering(move)
        if found is None:
            continue
        action, answer = found
        choices = {name: list(move["allowed"][name]) for name in answer.fields if move["allowed"].get(name)}
        out.append({"action": action, "title": answer.title, "choices": choices, "reason": answer.reason,
                    "likely": bool(move.get("likely"))})
    return out


class Sessions:
    """Per-session CSRF tokens: a session is a random id in an HttpOnly, SameSite=Strict cookie; its
    token, which the forms carry, is an HMAC of it under a secret that lives as long as the server."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    @staticmethod
    def new() -> str:
        return secrets.token_hex(16)

    def token(self, session: str) -> str:
        return hmac.new(self._secret, session.encode(), hashlib.sha256).hexdigest()

    def holds(self, session: str | None, token: str | None) -> bool:
        if not session or not token:
            return False
        return hmac.compare_digest(self.token(session).encode(), token.encode("utf-8", "replace"))

    @staticmethod
    def cookie(session: str) -> str:
        return f"{SESSION_COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/"


def parse(body: bytes, content_type: str) -> Fields:
    """A form's fields: url-encoded, each named once, within the sizes above (INVALID_VALUE otherwise)."""
    if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise InvalidValue("an answer is a form (application/x-www-form-urlencoded)")
    if len(body) > MAX_BODY:
        raise InvalidValue(f"an answer's form is at most {MAX_BODY} bytes")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError):
        raise InvalidValue("the answer's form could not be read (url-encoded UTF-8)") from None
    fields: Fields = {}
    for name, value in pairs:
        if name in fields:
            raise InvalidValue(f"the form names {name!r} twice", field=name)
        if len(value) > MAX_FIELD:
            raise InvalidValue(f"the form's {name!r} is longer than {MAX_FIELD} characters", field=name)
        fields[name] = value
    return fields


def record(sd: StateDir, run_id: str, fields: Fields) -> dict[str, Any]:
    """Record the answer the form names (its `action`), expecting the head its page was read at."""
    action, expect = fields.get("action", ""), fields.get("expect", "")
    answer = ANSWERS.get(action)
    if answer is None:
        raise InvalidValue(f"the web view answers {' or '.join(ANSWERS)}, not {action!r}", action=action)
    if not expect:
        raise InvalidValue("an answer names the head its page was read at (the form's expect)")
    known = {"action", "expect", "csrf", *answer.fields, *(("reason",) if answer.reason else ())}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise InvalidValue(f"a {action} answer takes no {', '.join(unknown)}", unknown=unknown)
    return answer.call(sd, run_id, fields, expect)

"""Who made a commit, as its trailers say: the names an actor, role or person may have, and the
identity trailers beside `Statedir-Actor` (the role) that say whose answer it was, how it came, by
which agent it was relayed, which person acted and which MCP client called.

A name is an identifier (letters, digits and ._@+-, at most 64, starting with a letter or digit):
never a newline, a control or bidi character, so nothing given as a name becomes a trailer line of
its own or reads as something else on a terminal.
"""
from __future__ import annotations

import re

from statedir.errors import InvalidId

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
ANSWERED_BY = "Statedir-Answered-By"  # `user`: the transition is the user's answer
CHANNEL = "Statedir-Channel"  # how the user's answer came: cli, mcp-elicitation, web
VIA = "Statedir-Via"  # the role that relayed the user's answer
PERSON = "Statedir-Person"  # the person (statedir.yaml `people:`) acting in the role
CLIENT = "Statedir-Client"  # the MCP client that made the call: its name and version (on every commit it made)
# The identity a request carries, by its key in a request's `who` and a log entry, and its trailer.
TRAILERS = {"person": PERSON, "answered_by": ANSWERED_BY, "channel": CHANNEL, "via": VIA}
# ... and every identity trailer a reader of the log shows.
NAMED = {**TRAILERS, "client": CLIENT}
_CLIENT_PART = re.compile(r"[^A-Za-z0-9._@+-]+")


def check_name(value: object, what: str = "actor") -> str:
    """`value` where it is a name (an actor, a role, a person); INVALID_ID otherwise."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        shown = repr(value)[:80] if isinstance(value, str) else type(value).__name__
        article = "an" if what[:1] in "aeiou" else "a"
        raise InvalidId(f"invalid {what} {shown}: {article} {what} is letters, digits and ._@+- (starting with "
                        "a letter or digit, at most 64 characters)", **{what: str(value)[:80]})
    return value


def client_label(name: object, version: object) -> str:
    """An MCP client's `clientInfo` as one line of a trailer: its name and version, each cut to what a
    name may hold (anything else a `_`), at most 64 characters each; `unknown` for a part not given."""
    def part(value: object) -> str:
        text = _CLIENT_PART.sub("_", value if isinstance(value, str) else "").strip("_")[:64]
        return text or "unknown"
    return f"{part(name)} {part(version)}"


def trailers(who: dict[str, str]) -> dict[str, str]:
    """The identity trailers of a request's `who`, in the order TRAILERS names them."""
    return {trailer: who[key] for key, trailer in TRAILERS.items() if who.get(key)}

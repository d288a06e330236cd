"""verify's hold on the store's people (statedir.yaml `people:`): the map changes only by a
`statedir people` commit (any other change to it, a hand edit above all, is illegal), and a commit
naming a person (Statedir-Person) is one that person may make: listed, as of its parent, with the
role it is made in."""
from __future__ import annotations

from typing import Any

from statedir.errors import StatedirError
from statedir.store import people
from statedir.store.layout import CONFIG

ACTION = "people"


def _map(reader: Any, oid: str | None) -> dict[str, list[str]] | None:
    """The people map of a statedir.yaml blob ({} where it names none; None: unreadable)."""
    if not oid or set(oid) == {"0"}:
        return {}
    try:
        return people.of(reader.plain(CONFIG, oid))
    except StatedirError:
        return None


def changed(reader: Any, commit: Any, statedirs: bool) -> str | None:
    """Why the commit's change to statedir.yaml is illegal (None: it leaves the people map alone,
    or is a `statedir people` commit, which its replay holds to the rules)."""
    if CONFIG not in commit.changed or (statedirs and commit.action == ACTION):
        return None
    _, old, new = commit.changed[CONFIG]
    before, after = _map(reader, old), _map(reader, new)
    if before == after:
        return None
    return ("the people map (statedir.yaml people:) changed " + ("by hand" if not statedirs else
            f"in the commit of a {commit.action} transition") + ": it changes only by `statedir people`, "
            "which the user makes")


def person(reader: Any, commit: Any) -> str | None:
    """Why the person a commit names may not have made it (None: none named, or one who may)."""
    name = commit.who.get("person")
    if not name:
        return None
    oid = reader.blob_id(commit.parent, CONFIG) if commit.parent else None
    held = _map(reader, oid) or {}
    roles = held.get(name)
    if roles is None:
        return (f"the commit names the person {name}, whom the people map as of its parent does not list"
                + (f" (it lists {', '.join(held)})" if held else " (it lists nobody)"))
    if commit.actor not in roles:
        return f"{name} acts as {people.either(roles)} as of the commit's parent, not as {commit.actor}"
    return None

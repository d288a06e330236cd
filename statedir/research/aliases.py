"""Sources registered on two machines: the same DOI (or the same normalized URL) made as two
records, each its own file, which git merges as two Sources. The earliest by history
(statedir.research.arrival: never by the date a record claims) stays the Source; each later one
records `alias_of` naming it, once, in a research commit (`sync` writes it after a merge that
brought Sources in; `doctor --fix` after a plain git merge). Nothing is deleted: Evidence naming
an alias still resolves, through it, to the Source it stands for. verify holds every alias to
`check` when it replays that commit."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from statedir.errors import ImmutableField, InvalidValue
from statedir.research import dedup

Read = Callable[[str], dict[str, Any] | None]  # a Source by id (None: no such Source)
Later = Callable[[str, str], bool]  # whether one Source provably arrived after another (arrival.History.later)
Earliest = Callable[[list[str]], str]  # the Source of a group that stays the Source


def keys(record: dict[str, Any]) -> set[str]:
    """What identifies the document a Source names: its DOI, its normalized URL."""
    out = set()
    if record.get("doi"):
        out.add(f"doi:{record['doi']}")
    if record.get("url"):
        out.add(f"url:{dedup.normalize_url(record['url'])}")
    return out


def duplicates(sources: dict[str, dict[str, Any]], earliest: Earliest) -> list[dict[str, Any]]:
    """[{id, alias_of, key}]: each Source that shares a DOI or normalized URL with another and is
    no alias yet, with the earliest of its group (the one it should stand for)."""
    live = {sid: r for sid, r in sources.items() if not r.get("alias_of")}
    group: dict[str, str] = {sid: sid for sid in live}  # union-find over shared keys

    def root(sid: str) -> str:
        while group[sid] != sid:
            group[sid] = group[group[sid]]
            sid = group[sid]
        return sid

    holder: dict[str, str] = {}
    for sid in sorted(live):
        for key in sorted(keys(live[sid])):
            if key in holder:
                group[root(sid)] = root(holder[key])
            else:
                holder[key] = sid
    members: dict[str, list[str]] = {}
    for sid in live:
        members.setdefault(root(sid), []).append(sid)
    out = []
    for ids in members.values():
        if len(ids) < 2:
            continue
        first = earliest(sorted(ids))
        for sid in sorted(ids):
            if sid != first:
                shared = sorted(keys(live[sid]) & keys(live[first])) or sorted(keys(live[sid]))
                out.append({"id": sid, "alias_of": first, "key": shared[0]})
    return sorted(out, key=lambda d: d["id"])


def check(entity_id: str, before: dict[str, Any] | None, after: dict[str, Any], read: Read, later: Later) -> None:
    """Refuse a Source write that sets `alias_of` other than once, to a Source that names the
    same document (the same DOI or normalized URL) and did not provably arrive after this one."""
    alias = after.get("alias_of")
    if alias == (before or {}).get("alias_of"):
        return
    if before is None:
        raise InvalidValue(f"source {entity_id}: a new Source is not an alias (alias_of is set on a duplicate "
                           "that arrived by a merge)", field="alias_of")
    if before.get("alias_of") is not None:
        raise ImmutableField(f"source {entity_id}: alias_of is set once and never changed", fields=["alias_of"])
    target = read(str(alias))
    if target is None or alias == entity_id:
        raise InvalidValue(f"source {entity_id}: alias_of names {alias!r}, which is no other Source",
                           field="alias_of")
    if not keys(after) & keys(target):
        raise InvalidValue(f"source {entity_id}: alias_of names {alias}, which has neither its DOI nor its URL",
                           field="alias_of")
    if later(str(alias), entity_id):
        raise InvalidValue(f"source {entity_id}: alias_of names {alias}, which history holds as added after it "
                           "(whatever its created_at says); the earlier Source stays the Source", field="alias_of")

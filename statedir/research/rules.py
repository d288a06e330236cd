"""What one research write may do to one record: the write path checks every record it is
about to commit against these rules, and verify holds every record a commit wrote to them.

- A Result or Claim is written once, never changed; no record is ever deleted.
- A later write changes only the fields its kind lists in `updates`, to the values listed
  there (a Question's status to answered or abandoned, a Run's to completed or failed, ...);
  the id, the links and what the record says are fixed when it is made.
- Every foreign key names a record that exists (in the store or in the same commit).
- A Source's `alias_of` is set once, to an earlier Source naming the same document
  (statedir.research.aliases).

What a record may hold at all is its schema's to say (`records.encode` checks it).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from statedir.errors import ImmutableField, InvalidValue, StatedirError, ValidationFailed
from statedir.research import aliases
from statedir.research.errors import UNKNOWN
from statedir.research.kinds import KINDS, Kind

Exists = Callable[[Kind, str], bool]
Read = Callable[[Kind, str], "dict[str, Any] | None"]


def check(kind: Kind, entity_id: str, before: dict[str, Any] | None, after: dict[str, Any],
          exists: Exists, read: Read | None = None, later: aliases.Later | None = None) -> None:
    """Refuse (a StatedirError) a write turning the record `before` (None: none yet) into `after`
    (`read`: a record as the write leaves it, and `later`: which Source history holds as added
    after which, for a Source's alias; without them no alias is set)."""
    rel = kind.rel(entity_id)
    if after.get("id") != entity_id:
        raise ValidationFailed(f"{rel} holds the id {after.get('id')!r}; a record's file is named by its id",
                               file=rel)
    if before is not None:
        _update(kind, entity_id, before, after)
    for field, target in kind.links.items():
        value = after.get(field)
        if value is not None and not exists(KINDS[target], value):
            raise UNKNOWN[target](f"{kind.name} {entity_id}: {field} names {value!r}, which does not exist",
                                  file=rel, **{field: value})
    if kind.name == "source":
        try:
            aliases.check(entity_id, before, after, lambda other: read(kind, other) if read else None,
                          later or (lambda one, other: True))
        except StatedirError as exc:
            exc.details.setdefault("file", rel)
            raise


def _update(kind: Kind, entity_id: str, before: dict[str, Any], after: dict[str, Any]) -> None:
    rel = kind.rel(entity_id)
    if kind.event:
        raise ImmutableField(f"{kind.name} {entity_id} is written once and never changed", file=rel)
    changed = sorted(k for k in set(before) | set(after)
                     if k != "schema_version" and before.get(k) != after.get(k))
    fixed = [k for k in changed if k not in kind.updates]
    if fixed:
        raise ImmutableField(f"{kind.name} {entity_id}: {', '.join(fixed)} never change once the record is made "
                             f"(a later write changes {', '.join(kind.updates) or 'nothing'})", file=rel,
                             fields=fixed)
    for field in changed:
        allowed = kind.updates[field]
        if allowed is not None and after.get(field) not in allowed:
            raise InvalidValue(f"{kind.name} {entity_id}: {field} may be set to {', '.join(allowed)} only, "
                               f"not {after.get(field)!r}", file=rel, field=field)


def deleted(rel: str) -> StatedirError:
    return ImmutableField(f"{rel} was deleted; the research ledger never deletes a record", file=rel)

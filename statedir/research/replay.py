"""verify's replay of a research-ledger commit: every file it wrote must be a record the ledger
writes (`research/<kind>/<id>.yaml`, or its kind's schema copy), none deleted, each record
allowed by the ledger's own rules (`rules.check`: written-once Results and Claims, fixed
fields, links that resolve, an alias only to a Source history holds as no later) on the
parent's records, and its bytes what `records.encode` writes for it. A record the commit adds
carries its own time (`created_at`; a Run's `started_at`, a Result's or Claim's `ts`) within
arrival.CLOCK_SKEW of the commit's author date: a record dated 1999 in a commit of today is
no record the ledger wrote.

A ledger write records no request (its ids and times are minted as it runs), so what a
record says is checked against the rules and its schema, not decided again.
"""
from __future__ import annotations

import functools
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from statedir.errors import IllegalTransition, StatedirError
from statedir.files import schema
from statedir.research import arrival, records, rules
from statedir.research.kinds import KINDS, Kind, parse_rel

if TYPE_CHECKING:
    from statedir.store.recorded import Commit, HistoryReader

SOURCE = KINDS["source"]
SCHEMA_COPIES = {f".schemas/{kind.schema}.schema.json": kind.schema for kind in KINDS.values()}


def replay(reader: HistoryReader, commit: Commit) -> dict[str, bytes | None]:
    """The bytes the ledger writes for each record the commit wrote; raises the first refusal."""
    out: dict[str, bytes | None] = {}
    written: dict[str, tuple[Kind, str, str]] = {}  # rel -> kind, id, old blob (zeros: new)
    for rel, (status, old, _) in sorted(commit.changed.items()):
        if rel in SCHEMA_COPIES:
            out[rel] = schema.schema_path(SCHEMA_COPIES[rel]).read_bytes()
            continue
        found = parse_rel(rel)
        if found is None:
            raise IllegalTransition(f"a research commit wrote {rel}; the ledger writes research/<kind>/<id>.yaml "
                                    "records only", file=rel)
        if status == "D":
            raise rules.deleted(rel)
        written[rel] = (found[0], found[1], old if status != "A" else "")

    def exists(kind: Kind, entity_id: str) -> bool:
        rel = kind.rel(entity_id)
        if rel in commit.changed:
            return commit.changed[rel][0] != "D"
        return commit.parent is not None and reader.objects.read(reader.spec(commit.parent, rel)) is not None

    def read(kind: Kind, entity_id: str) -> dict[str, Any] | None:
        rel = kind.rel(entity_id)
        spec = commit.changed[rel][2] if rel in commit.changed else \
            reader.spec(commit.parent, rel) if commit.parent else None
        found = reader.objects.read(spec) if spec else None
        return records.parse(found[2], rel) if found and found[1] == "blob" else None

    added = [entity_id for kind, entity_id, old in written.values() if kind is SOURCE and not old]
    authored = functools.cache(lambda: _author_date(reader, commit.sha))  # read once, where a record is new
    history = arrival.History(reader.store, commit.parent, pending=added)
    for rel, (kind, entity_id, old) in written.items():
        try:
            before_raw = reader.raw(old) if old else None
            after = records.parse(reader.raw(commit.changed[rel][2]), rel)
            if before_raw is None:
                _dated_by_its_commit(authored(), kind, entity_id, after)
            rules.check(kind, entity_id, records.parse(before_raw, rel) if before_raw is not None else None,
                        after, exists, read, history.later)
            out[rel] = records.encode(kind, after, before_raw)
        except StatedirError as exc:
            exc.details.setdefault("file", rel)
            raise
    return out


def _author_date(reader: HistoryReader, sha: str) -> datetime | None:
    found = reader.objects.read(sha)
    author = next((line for line in found[2].split(b"\n") if line.startswith(b"author ")), b"") if found else b""
    try:
        return datetime.fromtimestamp(int(author.rsplit(b" ", 2)[1]), timezone.utc)
    except (IndexError, ValueError):
        return None


def _dated_by_its_commit(authored: datetime | None, kind: Kind, entity_id: str, record: dict[str, Any]) -> None:
    """Refuse a new record whose own time is not its commit's author date (within arrival.CLOCK_SKEW)."""
    field = next((f for f in ("created_at", "started_at", "ts") if f in kind.columns), None)
    claimed = _moment(record.get(field)) if field else None
    if claimed is None or authored is None:
        return  # no time to hold (the schema says whether one is needed)
    if abs((claimed - authored).total_seconds()) > arrival.CLOCK_SKEW:
        raise IllegalTransition(f"{kind.name} {entity_id} says {field} {record.get(field)}, but the commit that adds "
                                f"it was made {authored:%Y-%m-%dT%H:%M:%SZ}; a record's own time is its commit's "
                                f"(within {arrival.CLOCK_SKEW // 3600} h)", file=kind.rel(entity_id), field=field)


def _moment(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)

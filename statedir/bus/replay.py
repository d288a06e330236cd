"""verify's replay of a handoff-bus commit: the verb its trailers name decided again on the
parent's session with the bus's own rules (`ops.decided`, `session.encode`), so a commit is
legal exactly when `statedir bus` could have made it.

The bus records no request: the one field a `set` or `append` changed is read from the two
versions of the session, then the change is decided again and its bytes compared. A
commit that changes two fields, moves a phase status back, rewrites a list, or names a verb
the bus does not have is refused here as the CLI would refuse it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statedir.bus import fields, ops, session
from statedir.errors import IllegalTransition
from statedir.files import schema

if TYPE_CHECKING:
    from statedir.store.recorded import Commit, HistoryReader

VERBS = ("init", "set", "append", "clear")
SCHEMA_COPY = f".schemas/{session.SCHEMA}.schema.json"


def replay(reader: HistoryReader, commit: Commit) -> dict[str, bytes | None]:
    """The bytes the bus writes for this commit (None: the session removed); raises the refusal."""
    verb = commit.action.removeprefix("bus-")
    if verb not in VERBS:
        raise IllegalTransition(f"the bus has no verb {verb!r} (it has {', '.join(VERBS)})", verb=verb)
    session.check_actor(commit.actor)
    rel = session.rel_path(commit.run_id)  # the session the trailers name: its file, and nothing else
    for path in sorted(commit.changed):
        if path not in (rel, SCHEMA_COPY):
            raise IllegalTransition(f"a bus-{verb} of session {commit.run_id} writes {rel} only, not {path}",
                                    file=path)
    out: dict[str, bytes | None] = {}
    if SCHEMA_COPY in commit.changed:
        out[SCHEMA_COPY] = schema.schema_path(session.SCHEMA).read_bytes()
    before = reader.objects.blob(reader.spec(commit.parent, rel)) if commit.parent else None
    if verb == "clear":
        if before is None:
            raise IllegalTransition(f"bus clear of {commit.run_id}, which did not exist (clear changes nothing then)")
        out[rel] = None
        return out
    if verb == "init":
        out[rel] = session.encode(commit.run_id, session.fresh(commit.run_id))
        return out
    change = commit.changed.get(rel)
    if change is None or change[0] == "D":
        raise IllegalTransition(f"a bus-{verb} that does not write {rel}", file=rel)
    old = session.parse(before, commit.run_id) if before is not None else session.fresh(commit.run_id)
    new = session.parse(reader.raw(change[2]), commit.run_id)
    field, value = changed_field(old, new, append=verb == "append")
    out[rel] = ops.decided(commit.run_id, old, field, value, append=verb == "append")[1]
    return out


def changed_field(old: dict[str, Any], new: dict[str, Any], *, append: bool) -> tuple[str, Any]:
    """(field, value) of the one `set` (or `append`) that could turn `old` into `new`: the
    single key that differs at each level, down to a value (a list's last item for append)."""
    parts: list[str] = []
    before: Any = old
    after: Any = new
    while True:
        differing = sorted(k for k in set(before) | set(after)
                           if before.get(k, fields.MISSING) != after.get(k, fields.MISSING))
        where = ".".join(parts) or "the session"
        if not differing:
            raise IllegalTransition(f"a bus-{'append' if append else 'set'} that changes nothing")
        if len(differing) > 1:
            raise IllegalTransition(f"{where}: {', '.join(differing[:5])} changed in one commit; a set or append "
                                    "changes one field")
        key = differing[0]
        parts.append(key)
        if key not in after:
            raise IllegalTransition(f"{'.'.join(parts)} was removed; the bus only sets and appends")
        below = before.get(key, fields.MISSING)
        value = after[key]
        if isinstance(value, dict):
            before, after = (below if isinstance(below, dict) else {}), value
            continue
        if append and isinstance(value, list) and value:
            return ".".join(parts), value[-1]
        return ".".join(parts), value


"""Acknowledged verify findings: `acknowledged.yaml`, an append-only log of the findings a person
reviewed and accepted (each with its reason), written one commit per acknowledgement, replayed by
verify like any transition, and read by verify to set those findings apart where they count
(statedir.history.ack_trust: on the clone that made them, or signed by an acknowledger)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from statedir import request_ids
from statedir.engine.transaction import utc_now
from statedir.errors import InvalidValue, StatedirError, ValidationFailed
from statedir.files import schema, yaml
from statedir.gitops import commit_message
from statedir.history import ack_local
from statedir.history.stored_files import parse
from statedir.store import layout
from statedir.store.store import Store
from statedir.store.write import persist

FILE = "acknowledged.yaml"
ACTION = "acknowledge"
SCHEMA_COPY = ".schemas/log-acknowledged.schema.json"


def key(finding: dict[str, Any]) -> tuple[str, str, str | None]:
    """What names a finding across runs of verify: its commit, kind and file."""
    return finding["commit"], finding["kind"], finding.get("file")


def keys(entries: Iterable[dict[str, Any]]) -> set[tuple[str, str, str | None]]:
    return {key(entry) for entry in entries if isinstance(entry, dict) and "commit" in entry and "kind" in entry}


def entries_of(request: dict[str, Any] | None, actor: str) -> list[dict[str, Any]]:
    """The entries an acknowledgement's recorded request appends (one per finding it names)."""
    args = (request or {}).get("args")
    reason, at = (request or {}).get("reason"), (request or {}).get("at")
    if not isinstance(args, dict) or not isinstance(args.get("findings"), list) or not isinstance(at, str):
        raise ValidationFailed("the commit records no acknowledgement (Statedir-Request with findings and time)")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidValue("acknowledging a finding needs a reason (what the review found)", argument="reason")
    out = []
    for finding in args["findings"]:
        if not isinstance(finding, dict):
            raise ValidationFailed("an acknowledged finding is not a mapping")
        entry = {"commit": args.get("commit"), "kind": finding.get("kind"), "file": finding.get("file"),
                 "reason": reason, "by": actor, "at": at}
        if request.get("request_id"):  # type: ignore[union-attr]
            entry["request_id"] = request["request_id"]  # type: ignore[index]
        out.append(entry)
    problems = schema.validate("log-acknowledged", out, FILE)
    if problems:
        raise InvalidValue(str(problems[0]))
    return out


def appended(before: bytes | None, entries: list[dict[str, Any]]) -> bytes:
    """The file's bytes after appending `entries` (the header first where the file is new)."""
    text = (before or yaml.header(layout.schema_ref(FILE)).encode())
    return text + "".join(yaml.dump_entry(entry) for entry in entries).encode()


def record(store: Store, commit: str, findings: list[dict[str, Any]], reason: str, actor: str, *,
           timeout: float | None = None) -> dict[str, Any]:
    """Acknowledge `findings` (verify's, all of `commit`) in one commit, recorded as this clone's
    own (statedir.history.ack_local, before the commit); those this clone already acknowledged are
    left out, and nothing is written when none is left (one another clone acknowledged is not)."""
    with store.locked(timeout, scope=FILE):
        raw = store.read_bytes(FILE) if (store.root / FILE).is_file() else None
        mine = ack_local.load(store)
        done = {key(e) for e in _parsed(raw) if isinstance(e, dict) and "commit" in e and "kind" in e
                and key(e) in mine.get(str(e.get("request_id")), ())}
        new = [f for f in findings if key(f) not in done]
        summary = f"acknowledge {len(new)} verify finding(s) of {commit[:10]}"
        if not new:
            return {"commit": None, "changed": False, "acknowledged": [], "run_id": "-",
                    "summary": f"every finding of {commit[:10]} is already acknowledged; nothing changed"}
        request_id = request_ids.new()
        request = {"at": _now(), "args": {"commit": commit, "findings": [{"kind": f["kind"], "file": f.get("file")}
                                                                        for f in new]},
                   "reason": reason, "request_id": request_id}
        entries = entries_of(request, actor)
        ack_local.add(store, request_id, keys(entries))
        writes = {FILE: appended(raw, entries)}
        shipped = schema.schema_path("log-acknowledged").read_bytes()
        if not (store.root / SCHEMA_COPY).is_file() or store.read_bytes(SCHEMA_COPY) != shipped:
            writes[SCHEMA_COPY] = shipped
        message = commit_message.message(summary, "-", actor, ACTION, reason=reason, request=request,
                                         request_id=request_id)
        sha = persist(store, writes=writes, message=message, author=actor)
    return {"commit": sha, "changed": True, "run_id": "-", "summary": summary, "acknowledged": entries}


def _now() -> str:
    return utc_now()


def _parsed(raw: bytes | None) -> list[Any]:
    if raw is None:
        return []
    data, _ = parse(FILE, raw)
    return data if isinstance(data, list) else []


_AT_HEAD: dict[str, list[dict[str, Any]]] = {}  # blob id -> its entries (a blob never changes): the newest one


def entries_at_head(reader: Any) -> list[dict[str, Any]]:
    """The file's entries as of HEAD (an unreadable file acknowledges nothing), parsed once per
    content: a long file (a sample store's thousands of entries) is not parsed again by every verify."""
    found = reader.objects.read(reader.spec("HEAD", FILE))
    if not found:
        return []
    entries = _AT_HEAD.get(found[0])
    if entries is None:
        try:
            parsed = _parsed(found[2])
        except StatedirError:
            return []
        entries = [e for e in parsed if isinstance(e, dict) and "commit" in e and "kind" in e]
        _AT_HEAD.clear()
        _AT_HEAD[found[0]] = entries
    return [dict(e) for e in entries]


def replay(reader: Any, commit: Any) -> dict[str, bytes]:
    """verify's replay of an acknowledgement: its recorded entries appended to the parent's file."""
    found = reader.objects.read(reader.spec(commit.parent, FILE)) if commit.parent else None
    out = {FILE: appended(found[2] if found else None, entries_of(commit.request, commit.actor))}
    if SCHEMA_COPY in commit.changed:
        out[SCHEMA_COPY] = schema.schema_path("log-acknowledged").read_bytes()
    return out

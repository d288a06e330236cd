"""The layout of a run's append-only logs: the one module that knows where entries live.

A log is a directory of day segments, `runs/<run>/history/<log>/<YYYY-MM-DD>.yaml`. The segment
an entry goes into is decided by the entry itself (the UTC day of its `at`), so every clone puts
it in the same file and a merge stays per segment. Only today's segment is ever appended to: a
past day's segment is sealed. A day whose file would grow past what any reader accepts
(`yaml.MAX_BYTES`) goes on in `<day>.2.yaml`, `<day>.3.yaml`, ... (`place`), read in that
order. An older store's single file `history/<log>.yaml` (the legacy layout) is read as the
log's first, sealed segment, before every dated one; `doctor --fix` moves its entries into
dated segments (`migration`).

Each segment is an ordinary statedir log file: the `$schema` header line and a YAML list,
checked by the same `log-<name>` schema.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from statedir.errors import CorruptStore, InvalidValue, ValidationFailed
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.hints import opt
from statedir.store import layout
from statedir.store.store import Store

# Every append-only log statedir knows; a template declares which of them its runs hold.
LOGS = ("transitions", "integrity", "revisions", "schema_validation", "collaboration_depth",
        "checkpoints", "reset_boundary", "failure_modes", "explicit_user_request", "mandatory_checkpoint_response",
        "inquiry_ledger", "compliance_override_action_receipt")
KNOWN = LOGS

_DAY = r"\d{4}-\d{2}-\d{2}"
SEGMENT_RE = re.compile(rf"^(?P<base>runs/[^/]+)/history/(?P<log>[^/]+)/{layout.DAY_SEGMENT}$")
LEGACY_RE = re.compile(r"^(?P<base>runs/[^/]+)/history/(?P<log>[^/]+)\.yaml$")
_TIME = re.compile(rf"^({_DAY})T\d{{2}}:\d{{2}}:\d{{2}}(\.\d+)?Z$")


def legacy(base: str, name: str) -> str:
    """The single-file log of the layout before segments (read, never written)."""
    return f"{base}/history/{name}.yaml"


def segment(base: str, name: str, day: str, part: int = 1) -> str:
    """A day's segment file: `<day>.yaml`, or its `part`-th file where the day rolled over."""
    return f"{base}/history/{name}/{day}{f'.{part}' if part > 1 else ''}.yaml"


def _day(value: Any) -> str | None:
    match = _TIME.match(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def day_of(entry: dict[str, Any], now: str) -> str:
    """The UTC day an entry belongs to: that of its `at`. Entries of the two logs whose schema
    has no `at` (schema_validation, collaboration_depth: the latter's `timestamp` is the
    observer's, not statedir's) belong to the day of the transition that wrote them (`now`,
    the `at` of that transition's own entry in the same commit)."""
    pinned = entry.get("log_day")  # a receipt log: one file per run, the one artifact its row binds
    day = (pinned if isinstance(pinned, str) and re.fullmatch(_DAY, pinned) else None) or _day(entry.get("at")) \
        or _day(now)
    if day is None:
        raise ValidationFailed(f"a log entry has no UTC time to place it by (the transition's time is {now!r})")
    return day


def target(base: str, name: str, entry: dict[str, Any], now: str) -> str:
    """The segment a new entry is appended to."""
    return segment(base, name, day_of(entry, now))


def log_of(rel: str) -> tuple[str, str] | None:
    """(run folder, log name) of a segment or legacy log path, else None."""
    match = SEGMENT_RE.match(rel) or LEGACY_RE.match(rel)
    return (match.group("base"), match.group("log")) if match else None


def ordered(paths: Iterable[str], base: str, name: str) -> list[str]:
    """The files of one log among `paths` (a directory or tree listing), in reading order:
    the legacy file first, then the dated segments by day."""
    old = legacy(base, name)
    prefix = f"{base}/history/{name}/"
    dated = {p: match for p in paths if p.startswith(prefix) and (match := SEGMENT_RE.match(p))}
    return ([old] if old in paths else []) + sorted(dated, key=lambda p: (dated[p]["day"], int(dated[p]["part"] or 1)))


def place(appends: Iterable[tuple[str, str, str]],
          size_of: Callable[[str], int | None]) -> list[tuple[str, str, str]]:
    """Each `(day segment, entry text, header)` sent to the file of that day it belongs in: the
    day's last part, or a new part where the entry would take that past what any reader
    accepts, so an accepted transition can always be read back. `size_of` gives a part's size
    (None: absent): a stat, never a read. An entry too large for any file is INVALID_VALUE."""
    pending: dict[str, int] = {}

    def size(rel: str) -> int | None:
        return pending[rel] if rel in pending else size_of(rel)

    out = []
    for rel, text, header in appends:
        match = SEGMENT_RE.match(rel)
        assert match is not None and not match["part"], rel
        base, name, day = match["base"], match["log"], match["day"]
        part = 1
        while size(segment(base, name, day, part + 1)) is not None:
            part += 1
        entry = len(text.encode("utf-8", "surrogatepass"))
        head = len(header.encode("utf-8"))
        have = size(segment(base, name, day, part)) or 0
        if have and have + entry > yaml.MAX_BYTES:
            part, have = part + 1, 0
        grown = have + entry + (0 if have else head)
        if grown > yaml.MAX_BYTES:
            raise InvalidValue(f"a {name} log entry of {entry} bytes is more than a log file may hold "
                               f"({yaml.MAX_BYTES} bytes, what any reader accepts); store large content in a "
                               f"file and register it with {opt('files')}", log=name, size=entry, limit=yaml.MAX_BYTES)
        target = segment(base, name, day, part)
        pending[target] = grown
        out.append((target, text, header))
    return out


def files(store: Store, base: str, name: str) -> list[str]:
    """One log's files on disk, in reading order (one directory listing; nothing is opened)."""
    found: list[str] = []
    if store.path(legacy(base, name)).is_file():
        found.append(legacy(base, name))
    folder = store.path(f"{base}/history/{name}")  # refuses a symlinked folder
    if folder.is_dir():
        found += [f"{base}/history/{name}/{entry}" for entry in os.listdir(folder)]
    return ordered(found, base, name)


def size(store: Store, rel: str) -> int | None:
    """A log file's size on disk (None: absent), for `place`: one stat, nothing opened."""
    try:
        return store.path(rel).stat().st_size
    except FileNotFoundError:
        return None


def read_file(store: Store, rel: str, name: str) -> list[dict[str, Any]]:
    """The entries of one log file (legacy or segment), validated against `log-<name>`."""
    raw = store.read_bytes(rel)
    return parse(rel, raw, name)


def parse(rel: str, raw: bytes | None, name: str) -> list[dict[str, Any]]:
    own = yaml_fast_reader.read_own(raw, layout.own_ref(rel, raw)) if raw is not None else None
    if own is not yaml_fast_reader.FOREIGN and not schema.validate(f"log-{name}", own or [], rel):
        return own or []  # statedir's own text (None: a file with no entries)
    doc = yaml.load(raw, rel) if raw is not None else None
    plain = yaml.to_plain(doc) if doc is not None else []
    problems = schema.validate(f"log-{name}", plain, rel, source=doc)
    if problems:
        raise CorruptStore(f"{problems[0]}", file=rel)
    return plain or []


def read(store: Store, base: str, name: str) -> list[dict[str, Any]]:
    """A whole log: every segment's entries, in segment order ([] for a log with none yet)."""
    out: list[dict[str, Any]] = []
    for rel in files(store, base, name):
        out += read_file(store, rel, name)
    return out


def today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())  # UTC; time, not datetime: one import less


def migration(base: str, name: str, old: list[dict[str, Any]], segments: dict[str, list[dict[str, Any]]],
              fallback_day: str) -> dict[str, list[dict[str, Any]]]:
    """The dated segments a legacy log's entries `old` move into (segment path -> all its entries),
    given the log's existing `segments` (path -> entries). An entry goes to the day of its `at`
    (or its `timestamp`, for logs without `at`), else the day of the entry before it (else
    `fallback_day`). Moved entries come before a segment's own: the legacy file was read first."""
    moved: dict[str, list[dict[str, Any]]] = {}
    day = next((d for e in old if (d := _day(e.get("at")) or _day(e.get("timestamp")))), fallback_day)
    for entry in old:
        day = _day(entry.get("at")) or _day(entry.get("timestamp")) or day
        moved.setdefault(segment(base, name, day), []).append(entry)
    return {rel: entries + segments.get(rel, []) for rel, entries in moved.items()}


def render(entries: list[dict[str, Any]], schema_ref: str) -> bytes:
    """A whole segment file as statedir writes it: its header, then each entry."""
    return (yaml.header(schema_ref) + "".join(yaml.dump_entry(e) for e in entries)).encode("utf-8")

"""A bus session on disk: its id, its file `bus/<session>.yaml`, reading and encoding it."""
from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Any

from statedir.errors import CorruptStore, InvalidId, InvalidValue
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.gitops.identity import check_name
from statedir.store import layout
from statedir.store.store import Store

SCHEMA = "bus-session"
FOLDER = "bus"
# pipeline-state.sh's label convention <YYYY-MM-DD>-<slug>, inside statedir's run-id rules (at most 128).
SESSION_RE = re.compile(r"^(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})-[A-Za-z0-9][A-Za-z0-9._-]{0,116}$")
MAX_VALUE_BYTES = 1 << 20  # the bus holds key fields and paths, never the blobs themselves


def check_session(session: str) -> str:
    """The session id, or INVALID_ID unless it is `<YYYY-MM-DD>-<slug>` with a real date."""
    match = SESSION_RE.fullmatch(session)
    valid = match is not None
    if match:
        try:
            datetime.date.fromisoformat(match["date"])
        except ValueError:
            valid = False
    if not valid or not layout.RUN_ID_RE.fullmatch(session):
        raise InvalidId(f"invalid session id {session!r}: use <YYYY-MM-DD>-<slug>, e.g. 2026-06-30-member-blog "
                        "(a real date; the slug letters, digits and ._-; at most 128 characters)", session=session)
    return session


def check_actor(actor: str) -> str:
    """The actor a bus write is made by: a name (INVALID_ID otherwise, as on every entry point)."""
    return check_name(actor, "actor")


def check_text(what: str, value: str) -> str:
    """A value the bus can store and print back: Unicode text without NUL, at most 1 MiB."""
    if not isinstance(value, str):  # (the CLI passes text; lists and mappings are made by append and dots)
        raise InvalidValue(f"{what} is a {type(value).__name__}; the bus stores strings", field=what)
    if "\x00" in value:
        raise InvalidValue(f"{what} contains a NUL byte", field=what)
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidValue(f"{what} is not valid Unicode text (undecodable bytes)", field=what) from None
    if size > MAX_VALUE_BYTES:
        raise InvalidValue(f"{what} is {size} bytes, more than the bus takes ({MAX_VALUE_BYTES}): write it to a "
                           "file and store the file's path", field=what, size=size)
    return value


def of_file(store: Store, path: str) -> str:
    """The session whose file `path` is (what `init` printed, handed to agents as state_file);
    INVALID_ID for any other path."""
    real = Path(os.path.realpath(path))
    if real.parent != store.root / FOLDER or real.suffix != ".yaml":
        raise InvalidId(f"{path} is not a bus session file of the store {store.root} (bus/<session>.yaml)",
                        path=path)
    return check_session(real.stem)


def rel_path(session: str) -> str:
    """The session's store-relative file."""
    return f"{FOLDER}/{check_session(session)}.yaml"


def fresh(session: str) -> dict[str, Any]:
    """What `init` writes: pipeline-state.sh's `{session, phases: {}}`."""
    return {"session": session, "phases": {}}


def read(store: Store, session: str) -> tuple[dict[str, Any], bytes] | None:
    """The session's plain data and its bytes, None when it does not exist; a file that is
    not a valid session (a hand edit) is CORRUPT_STORE."""
    raw = store.read_bytes(rel_path(session))
    return None if raw is None else (parse(raw, session), raw)


def parse(raw: bytes, session: str) -> dict[str, Any]:
    """A session file's plain data; CORRUPT_STORE where it is not a valid session of `session`."""
    rel = rel_path(session)
    data = yaml_fast_reader.read_own(raw, layout.schema_ref(rel))
    if data is yaml_fast_reader.FOREIGN:
        data = yaml.to_plain(yaml.load(raw, rel))
    problems = schema.validate(SCHEMA, data, rel)
    if problems or not isinstance(data, dict):
        raise CorruptStore(f"{problems[0] if problems else rel + ': not a mapping'}; fix the file or "
                           "`git checkout` it", file=rel, errors=[p.as_dict() for p in problems])
    if data["session"] != session:
        raise CorruptStore(f"{rel} names session {data['session']!r}, not {session!r}", file=rel)
    return data


def encode(session: str, data: dict[str, Any]) -> bytes:
    """The file's bytes (header line first); a session too large to read back is refused."""
    rel = rel_path(session)
    raw = yaml.dump(data, layout.schema_ref(rel)).encode("utf-8")
    if len(raw) > yaml.MAX_BYTES:
        raise InvalidValue(f"session {session} would grow past {yaml.MAX_BYTES} bytes; store paths, not contents",
                           session=session)
    return raw


def schema_copy(store: Store) -> dict[str, bytes]:
    """The session schema's copy in `.schemas/` where a store made before the bus lacks it
    (or holds an older one), so the files' header line leads editors to it."""
    rel = f".schemas/{SCHEMA}.schema.json"
    packaged = schema.schema_path(SCHEMA).read_bytes()
    return {} if store.read_bytes(rel) == packaged else {rel: packaged}

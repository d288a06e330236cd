"""What a replayed transition writes: its recorded request read back (`request`), the run's files
on the parent (`run_files`), and the files `transaction.apply` writes for the change the rules
decide, byte for byte, on the parent's files (`render`)."""
from __future__ import annotations

from typing import Any

from statedir import request_ids
from statedir.engine import run_shape
from statedir.engine.template import compiled as compile_mod
from statedir.engine.transaction import LOGS, planned, scope_of
from statedir.engine.transition_data import Change, Request
from statedir.errors import ValidationFailed
from statedir.files import yaml
from statedir.gitops.object_ids import blob_id
from statedir.history.snapshot import CommitReader
from statedir.store import layout, run_logs
from statedir.store.recorded import Commit


def run_files(reader: CommitReader, commit: Commit) -> dict[str, str]:
    return reader.files(commit.parent, f"runs/{commit.run_id}") if commit.parent else {}


def request(commit: Commit) -> tuple[Request, str]:
    if commit.request is None:
        raise ValidationFailed("the commit records no request (Statedir-Request), so it cannot be decided again")
    args = commit.request.get("args")
    at = commit.request.get("at")
    if not isinstance(args, dict) or not isinstance(at, str):
        raise ValidationFailed("the recorded request has no args or time")
    request_id = commit.request.get("request_id")  # absent in commits made before request ids
    if request_id is not None and not (isinstance(request_id, str) and request_ids.ID_RE.match(request_id)):
        raise ValidationFailed(f"the recorded request id {str(request_id)[:40]!r} is not a request id")
    return Request(commit.action, commit.actor, args, commit.request.get("reason"), request_id, commit.who), at


def _compiled(t: Any, commit: Commit) -> dict[str, bytes]:
    """The template's compiled schemas a transition's commit wrote (derived data: they must be
    exactly what the template compiles to)."""
    return {rel: text.encode() for rel, text in compile_mod.schema_files(t).items()
            if rel in commit.changed}


def render(reader: CommitReader, commit: Commit, files: dict[str, str], change: Change, req: Request,
           now: str, t: Any = None) -> dict[str, bytes]:
    """What `transaction.apply` writes for `change`, byte for byte, on the parent's files."""
    scope = scope_of(t) if t is not None else None
    base = f"runs/{commit.run_id}"
    data, appends = planned(base, change, req, now, t.logs if t is not None else LOGS, t, files)
    older = run_shape.older_files(t, base, change.state, change.stages, lambda rel: reader.plain(rel, files[rel])
                                  if rel in files else None) if t is not None else {}
    out: dict[str, bytes] = {}

    def text(rel: str, value: Any) -> tuple[bytes, bool]:
        if rel in files and not reader.parsed(rel, files[rel])[1]:  # hand comments: merged, as apply does
            return yaml.dump(yaml.merge(yaml.load(reader.raw(files[rel]), rel), value),
                             layout.schema_ref(rel, scope)).encode(), False
        return yaml.dump(value, layout.schema_ref(rel, scope)).encode(), True

    for rel in [*data, *(r for r in older if r not in data)]:
        made = commit.changed.get(rel)
        if rel in older and made is not None:  # a commit of statedir before the written shape: its files
            found, plain = text(rel, older[rel])
            if blob_id(found, len(commit.sha)) == made[2]:
                out[rel] = found
                if plain:
                    reader.rendered[rel] = older[rel]
                continue
        if rel in data:
            out[rel], plain = text(rel, data[rel])
            if plain:
                reader.rendered[rel] = data[rel]
    entries = []
    for rel, value in appends:
        owner = run_logs.log_of(rel)
        if owner and run_logs.legacy(*owner) in commit.changed:  # made by statedir before log segments
            rel = run_logs.legacy(*owner)
        entries.append((rel, yaml.dump_entry(value), yaml.header(layout.schema_ref(rel, scope))))
    dated = run_logs.place([e for e in entries if run_logs.SEGMENT_RE.match(e[0])],  # a full day rolls over,
                           lambda rel: len(reader.raw(files[rel])) if rel in files else None)  # as in apply
    for rel, text, header in [e for e in entries if not run_logs.SEGMENT_RE.match(e[0])] + dated:
        before = out.get(rel)
        if before is None:
            before = reader.raw(files[rel]) if rel in files else b""
        out[rel] = before + (header + text if not before else text).encode()
    if t is not None:
        out.update(_compiled(t, commit))
    return out

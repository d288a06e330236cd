"""The audit trail read from git in one process: every commit that touched the store (or one
run), statedir's own transitions and anyone else's, filtered by actor, action, time and count."""
from __future__ import annotations

import datetime
import json
import re
from typing import Any

from statedir.engine import renumbered
from statedir.errors import InvalidValue, StatedirError
from statedir.files import yaml
from statedir.gitops import commit_message, git, identity, objects
from statedir.hints import opt
from statedir.history import path_index
from statedir.store import layout
from statedir.store.store import Store

_FIELDS = ("%H", "%cd", "%an", "%(trailers:key=Statedir-Run,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Actor,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Action,valueonly,separator=%x2C)",
           f"%(trailers:key={commit_message.REQUEST_TRAILER},valueonly,separator=%x2C)",
           *(f"%(trailers:key={trailer},valueonly,separator=%x2C)" for trailer in identity.NAMED.values()), "%s")
_RELATIVE = re.compile(r"^(\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago$|^(yesterday|today|now)$")


def since_arg(since: str) -> tuple[str, str | None]:
    """`--since` as git takes it (an ISO 8601 date or time, or 'N days ago' and the like), and
    for an absolute time its UTC form, which entries are also compared with (git ignores
    dates past 2100 rather than matching nothing)."""
    text = since.strip()
    if _RELATIVE.match(text.lower()):
        return text, None
    try:
        when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidValue(f"{opt('since')} {since!r} is not a date: use 2026-11-30, 2026-11-30T12:00:00Z "
                           "or '3 days ago'", since=since) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.isoformat(), when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def entries(store: Store, run_id: str | None = None, *, actor: str | None = None, action: str | None = None,
            since: str | None = None, limit: int | None = None, start: str | None = None,
            skip: int = 0, path: str | None = None) -> list[dict[str, Any]]:
    """Every commit touching the store (or the run's folder), newest first, as
    {commit, time, actor, action, run_id, summary, reason, statedir} and, where the commit names them,
    person, answered_by, channel, via and client (statedir.gitops.identity), and `by`, all that in a
    phrase; a commit without
    statedir's trailers (a hand edit, a `git revert`) is listed with `statedir: false` and
    its git author as actor. From commit `start` (default HEAD), the first `skip` matches left out;
    `path` (store-relative, instead of a run): the commits that touched it (a bus session's file)."""
    if limit is not None and limit < 1:
        raise InvalidValue(f"{opt('limit')} must be at least 1, not {limit}", limit=limit)
    if not git.head(store.worktree):
        return []
    fmt = [commit_message.UTC_DATE, "--format=" + "%x1f".join(_FIELDS) + "%x1e"]
    filtered = actor is not None or action is not None
    spec = store.git_path(path if path is not None else store.run_dir(run_id) if run_id else ".")
    after = None
    if since is None and (run_id or path):  # the path's commits as remembered (statedir.history.path_index)
        listed = path_index.commits(store, spec, start=start)
        if not filtered:
            listed = listed[skip:None if limit is None else skip + limit]
            skip = 0
        raw = path_index.records(store, listed, *fmt, env={"TZ": "UTC"})
    else:  # the whole store's log (a page of it stops early), or --since: git's own walk
        args = ["log", *fmt]
        if since is not None:
            git_since, after = since_arg(since)
            args.append(f"--since={git_since}")
        if skip and not filtered:
            args.append(f"--skip={skip}")
            skip = 0
        if limit is not None and not filtered:
            args.append(f"-n{limit}")
        raw = git.run(store.worktree, *args, start or "HEAD", "--", spec, env={"TZ": "UTC"}).stdout
    out = raw.decode(errors="replace")
    found = []
    labels: dict[str, dict[str, str]] = {}  # run -> request id -> its version's label now
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != len(_FIELDS):
            continue
        sha, time, author, run, who, what, request, *named, summary = fields
        ours = bool(run and who and what)
        entry = {"commit": sha, "time": time, "actor": who if ours else author, "action": what if ours else None,
                 "run_id": run if ours else run_id, "summary": summary, "reason": _reason(request),
                 "statedir": ours}
        if ours and " -> " in summary:  # a version it made may have been renumbered by a merge since
            entry = _relabelled(store, entry, _request_field(request, "request_id"), labels)
        if ours:  # the person, the user's answer and how it came, the agent that relayed it, the MCP client
            entry.update((key, value) for key, value in zip(identity.NAMED, named, strict=True) if value)
        entry["by"] = by(entry)
        if after is not None and time < after:
            break  # newest first: every later entry is older still
        if (actor is None or entry["actor"] == actor) and (action is None or entry["action"] == action):
            if skip:
                skip -= 1
                continue
            found.append(entry)
            if limit is not None and len(found) >= limit:
                break
    return found


def by(entry: dict[str, Any]) -> str:
    """Who made a log entry's commit, in a phrase: the person and the role, whose answer, how it
    came and through whom ("alice as pipeline_orchestrator", "user via pipeline_orchestrator
    (mcp-elicitation)", "pipeline_orchestrator (client mcpagent-A 1.0)")."""
    text = str(entry.get("actor") or "")
    if entry.get("person"):
        text = f"{entry['person']} as {text}"
    if entry.get("via"):
        text += f" via {entry['via']}"
    notes = [entry[key] for key in ("channel",) if entry.get(key)]
    if entry.get("client"):
        notes.append(f"client {entry['client']}")
    return text + (f" ({', '.join(notes)})" if notes else "")


def _reason(request: str) -> str | None:
    return _request_field(request, "reason")


def _request_field(request: str, key: str) -> str | None:
    try:
        value = json.loads(request).get(key) if request else None
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


_REQUEST_ID = re.compile(rb"^request_id: '?([0-9A-Za-z]+)'?$", re.M)


def _made_by(store: Store, run: str, label: str, request_id: str) -> bool:
    """Whether the passport `label` of `run` is the one `request_id` registered (read as written)."""
    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}", label):
        return False
    try:
        layout.check_run_id(run)
        raw = store.path(f"{store.run_dir(run)}/materials/{label}.yaml").read_bytes()
    except (StatedirError, OSError, ValueError):
        return False
    found = _REQUEST_ID.search(raw)
    return found is not None and found[1].decode() == request_id


def _relabelled(store: Store, entry: dict[str, Any], request_id: str | None,
                labels: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The entry naming the label its version has now (statedir.engine.renumbered), the run's
    passports read once per call of `entries`."""
    run = entry.get("run_id")
    if not request_id or not isinstance(run, str):
        return entry
    named = entry["summary"].rpartition(" -> ")[2]
    if run not in labels and _made_by(store, run, named, request_id):
        return entry  # the usual case: the label it names is still its own (one small file read)
    if run not in labels:
        passports: dict[str, Any] = {}
        try:
            layout.check_run_id(run)
            for path in sorted(store.path(f"{store.run_dir(run)}/materials").glob("*.yaml")):
                passports[path.stem] = yaml.to_plain(yaml.load(path.read_bytes(), path.name))
        except (StatedirError, OSError):
            passports = {}
        labels[run] = renumbered.labels(passports)
    return renumbered.entry(entry, labels[run], request_id)


START = "start"  # the first page's cursor: the newest entries
_CURSOR = re.compile(r"^([0-9a-f]{7,64})\.(\d{1,9})$")


def page(store: Store, run_id: str | None = None, *, cursor: str = START, limit: int = 50,
         **filters: Any) -> dict[str, Any]:
    """One page of `entries`: {entries, next_cursor}, next_cursor null on the last page. A
    cursor names the commit the first page was read at and how many entries came before, so
    commits made meanwhile neither repeat nor hide an entry."""
    if limit < 1:
        raise InvalidValue(f"{opt('limit')} must be at least 1, not {limit}", limit=limit)
    if cursor == START:
        start, skip = git.head(store.worktree), 0
        if start is None:
            return {"entries": [], "next_cursor": None}
    else:
        matched = _CURSOR.match(cursor)
        refused = InvalidValue(f"{opt('cursor')} {cursor!r} is not a cursor this log gave: use 'start', or a page's "
                               "next_cursor", cursor=cursor)
        if matched is None:
            raise refused
        try:
            start, skip = objects.resolve(store.worktree, matched[1]), int(matched[2])
        except InvalidValue:
            raise refused from None
    found = entries(store, run_id, limit=limit + 1, start=start, skip=skip, **filters)
    more = len(found) > limit
    return {"entries": found[:limit], "next_cursor": f"{start}.{skip + limit}" if more else None}

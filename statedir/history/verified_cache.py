"""What a whole-store `verify` found clean, remembered so the next one replays only the commits
since (issue 37): disposable files under `.git/statedir/`, rebuilt when absent.

`verified.json` holds the commit a verify reached, how many commits it checked, the objects of
the files that say how history is judged (signers.yaml, acknowledged.yaml, statedir.yaml) at that
commit, each Material Passport deleted by then and not added again, with the blob it held before
(a label added again after that commit is judged against what it named: `label_reused`), and the
name of the file of what it found: `verified-findings/<sha256>.json`, named by its content's
digest (each finding is about one commit, which its id names for good), a list of [commit, kind,
message, [file, ...]]: the findings in order, those in a row that share commit, kind and message
in one entry (a commit of 30,000 files made by hand is one entry, read back as one
list of names). A verify that finds nothing new keeps that file as it is and rewrites only the
small `verified.json`. A later whole-store verify whose HEAD descends from that commit, with those
files the same at HEAD, checks only the commits after it (as `verify --since` does) and hands the
findings remembered on as they are; anything else (no file, a file this version did not write, a
findings file whose bytes are not its name's digest, a rewritten history, a signer added) verifies
the whole history again. Only a result with nothing acknowledged, repaired or left uncounted, over
a history with no merge commit (a hand merge changes how every later commit is replayed, a repair
commit how an earlier merge counts) is remembered: so no later commit changes how a remembered
finding stands, while those files are the same. The files are local to this clone (never pushed or
fetched).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, NamedTuple

from statedir.engine.template.identity import Seen
from statedir.files import rules_identity
from statedir.gitops import git, objects
from statedir.store.store import Store

FORMAT = 7  # raise it whenever verify's rules change: a clean verdict of older rules is then not taken
_JUDGING = ("signers.yaml", "acknowledged.yaml", "statedir.yaml")
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_NAMES = {str, type(None)}  # what a finding's file is: a path, or None


class Start(NamedTuple):
    """Where the next verify may begin: the commit verified, the commits checked up to it, the
    findings up to it, and the name (digest) of the file they were read from."""

    commit: str
    checked: int
    findings: list[dict[str, Any]]
    digest: str
    templates: list[tuple[tuple[str, str], Seen]]  # the template names and versions history held (template_check)
    removed: dict[str, str]  # passport path -> the blob it held before it was deleted (not added again since)


def _file(store: Store) -> Any:
    return store.cache_dir / "verified.json"


def _findings_file(store: Store, digest: str) -> Any:
    return store.cache_dir / "verified-findings" / f"{digest}.json"


def _judging(store: Store, rev: str) -> list[str]:
    """The object ids (or "missing") of the files that say how history is judged, at `rev`."""
    query = "".join(f"{rev}:{store.git_path(rel)}\n" for rel in _JUDGING).encode()
    lines = git.run(store.worktree, "cat-file", "--batch-check", stdin=query).stdout.decode().splitlines()
    return [line.split()[0] if len(line.split()) == 3 else "missing" for line in lines]


def start(store: Store) -> Start | None:
    """Where the next verify may begin; None to verify the whole history."""
    try:
        saved = json.loads(_file(store).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("rules") != rules_key():
        return None
    sha, checked, judging = saved.get("commit"), saved.get("checked"), saved.get("judging")
    digest = saved.get("findings")
    if not isinstance(sha, str) or not _SHA.match(sha) or not isinstance(checked, int) or checked < 0:
        return None
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        return None
    findings = _read_findings(store, digest)
    templates, removed = _templates(saved.get("templates")), saved.get("removed")
    if findings is None or templates is None or not _removed(removed):
        return None
    head = git.head(store.worktree)
    if head is None or not objects.is_ancestor(store.worktree, sha, head) or judging != _judging(store, "HEAD"):
        return None
    return Start(sha, checked, findings, digest, templates, removed)


def _removed(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) and _SHA.match(v)
                                           for k, v in value.items())


def _templates(rows: Any) -> list[tuple[tuple[str, str], Seen]] | None:
    if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == 5 and all(isinstance(v, str) for v in r)
                                             and _SHA.match(r[4]) for r in rows):
        return None
    return [((name, version), Seen(digest, where, commit)) for name, version, digest, where, commit in rows]


def _read_findings(store: Store, digest: str) -> list[dict[str, Any]] | None:
    try:
        data = _findings_file(store, digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            return None
        rows = json.loads(data)
    except (OSError, ValueError):
        return None
    if not isinstance(rows, list):
        return None
    out: list[dict[str, Any]] = []
    for row in rows:
        if type(row) is not list or len(row) != 4:
            return None
        commit, kind, message, files = row
        if type(commit) is not str or type(kind) is not str or type(message) is not str or type(files) is not list \
                or not files or not _NAMES.issuperset(map(type, files)):
            return None
        out += [{"commit": commit, "kind": kind, "file": name, "message": message} for name in files]
    return out


def _rows(findings: list[dict[str, Any]]) -> list[list[Any]]:
    """The findings file's entries: those in a row with the same commit, kind and message in one."""
    rows: list[list[Any]] = []
    for f in findings:
        last = rows[-1] if rows else None
        if last is not None and last[0] == f["commit"] and last[1] == f["kind"] and last[2] == f["message"]:
            last[3].append(f["file"])
        else:
            rows.append([f["commit"], f["kind"], f["message"], [f["file"]]])
    return rows


def rules_key() -> str:
    """Which statedir judged (statedir.files.rules_identity), with this file's format."""
    return rules_identity.key(str(FORMAT))


def _a_finding(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"commit", "kind", "file", "message"} and \
        all(isinstance(value[k], str) for k in ("commit", "kind", "message")) and \
        (value["file"] is None or isinstance(value["file"], str))


def remember(store: Store, head: str, result: dict[str, Any], merges: bool, earlier: Start | None,
             templates: list[tuple[tuple[str, str], Seen]], removed: dict[str, str]) -> None:
    """Keep a whole-store result at `head`, with the template names and versions history held up
    to it and the passports `removed` by then (a write that fails is a cache not kept); not one
    with anything acknowledged, repaired or uncounted, nor one over `merges`. Its findings begin
    with those `earlier` started from (verify hands them on as they are); where there are no
    others, their file is kept as it is (nothing of them written)."""
    if merges or result.get("acknowledged") or result.get("repaired") or result.get("not_counted"):
        return
    findings = result["findings"]
    before = len(earlier.findings) if earlier is not None else 0
    if not all(_a_finding(f) for f in findings[before:]):
        return
    try:
        if earlier is not None and len(findings) == before:
            digest = earlier.digest
        else:
            data = json.dumps(_rows(findings)).encode()
            digest = hashlib.sha256(data).hexdigest()
            _write(_findings_file(store, digest), data)
        record = {"format": FORMAT, "rules": rules_key(), "commit": head, "checked": result["checked"],
                  "findings": digest, "judging": _judging(store, head),
                  "templates": [[*key, *first] for key, first in templates if first.commit is not None],
                  "removed": removed}
        _write(_file(store), json.dumps(record).encode())
        if earlier is None or earlier.digest != digest:  # what files before named (or an older format), now none
            for other in _findings_file(store, digest).parent.glob("*.json"):
                if other.name != f"{digest}.json":
                    other.unlink(missing_ok=True)
    except OSError:
        pass


def _write(target: Any, data: bytes) -> None:
    """`data` put at `target` whole or not at all."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise

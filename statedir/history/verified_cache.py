"""What a whole-store `verify` found clean, remembered so the next one replays only the commits
since (issue 37): a disposable file under `.git/statedir/`, rebuilt when absent.

It holds the commit a verify reached, how many commits it checked, what it found (each finding
is about one commit, which its id names for good), and the objects of the files that say how
history is judged (signers.yaml, acknowledged.yaml, statedir.yaml) at that
commit. A later whole-store verify whose HEAD descends from that commit, with those files the
same at HEAD, checks only the commits after it (as `verify --since` does); anything else (no
file, a file this version did not write, a rewritten history, a signer added) verifies the whole
history again. Only a result with nothing acknowledged, repaired or left uncounted, over a
history with no merge commit (a hand merge changes how every later commit is replayed, a repair
commit how an earlier merge counts) is remembered. The file is local to this clone (never pushed
or fetched).
"""
from __future__ import annotations

import json
import os
import re
from typing import Any

from statedir.files import rules_identity
from statedir.gitops import git, objects
from statedir.store.store import Store

FORMAT = 4  # raise it whenever verify's rules change: a clean verdict of older rules is then not taken
_JUDGING = ("signers.yaml", "acknowledged.yaml", "statedir.yaml")
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def _file(store: Store) -> Any:
    return store.cache_dir / "verified.json"


def _judging(store: Store, rev: str) -> list[str]:
    """The object ids (or "missing") of the files that say how history is judged, at `rev`."""
    query = "".join(f"{rev}:{store.git_path(rel)}\n" for rel in _JUDGING).encode()
    lines = git.run(store.worktree, "cat-file", "--batch-check", stdin=query).stdout.decode().splitlines()
    return [line.split()[0] if len(line.split()) == 3 else "missing" for line in lines]


def start(store: Store) -> tuple[str, int, list[dict[str, Any]]] | None:
    """(the commit verified, the commits checked up to it, the findings up to it) where the next
    verify may begin there; None to verify the whole history."""
    try:
        saved = json.loads(_file(store).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("rules") != rules_key():
        return None
    sha, checked, judging = saved.get("commit"), saved.get("checked"), saved.get("judging")
    findings = saved.get("findings")
    if not isinstance(sha, str) or not _SHA.match(sha) or not isinstance(checked, int) or checked < 0:
        return None
    if not isinstance(findings, list) or not all(_a_finding(f) for f in findings):
        return None
    head = git.head(store.worktree)
    if head is None or not objects.is_ancestor(store.worktree, sha, head) or judging != _judging(store, "HEAD"):
        return None
    return sha, checked, findings


def rules_key() -> str:
    """Which statedir judged (statedir.files.rules_identity), with this file's format."""
    return rules_identity.key(str(FORMAT))


def _a_finding(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"commit", "kind", "file", "message"} and \
        all(isinstance(value[k], str) for k in ("commit", "kind", "message")) and \
        (value["file"] is None or isinstance(value["file"], str))


def remember(store: Store, head: str, result: dict[str, Any], merges: bool) -> None:
    """Keep a whole-store result at `head` (a write that fails is a cache not kept); not one with
    anything acknowledged, repaired or uncounted, nor one over `merges`."""
    if merges or result.get("acknowledged") or result.get("repaired") or result.get("not_counted"):
        return
    if not all(_a_finding(f) for f in result["findings"]):
        return
    record = {"format": FORMAT, "rules": rules_key(), "commit": head, "checked": result["checked"], "findings": result["findings"],
              "judging": _judging(store, head)}
    target = _file(store)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(record))
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)

"""A template's identity: its name, its version and its content digest (`Template.digest`). A
name and version once seen (shipped with statedir, stored in the store, or anywhere in the
store's history) have that one content for good: `new --template` refuses to store other
content under them, and verify reports a commit that does as `illegal`."""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

from statedir.engine import template
from statedir.engine.template import Template
from statedir.errors import InvalidValue, StatedirError
from statedir.files import yaml
from statedir.files.parse_cache import ParseCache
from statedir.gitops import git, objects
from statedir.store.store import Store

_KIND = "template-identity:1"  # what an entry of the identities cache holds: [name, version, digest] or null


class Seen(NamedTuple):
    """The content a name and version were first seen with, and where."""

    digest: str
    where: str  # "statedir ships it", or "commit <sha> stored it as <file>"
    commit: str | None = None


Known = dict[tuple[str, str], Seen]


@functools.lru_cache(maxsize=64)
def identity(raw: bytes, cache_dir: Path | None = None) -> tuple[str, str, str] | None:
    """(name, version, digest) of a template file's bytes, read without checking its rules;
    None where it is no template with a name and a version. Kept per content, in the process and,
    with `cache_dir` (a store's), on disk under it: every verify asks it of each template
    statedir ships, and parsing one with ruamel costs a second under load."""
    if cache_dir is None:
        return _read_identity(raw)
    found, _ = ParseCache(cache_dir / "identities").through(_KIND, raw, lambda: (_read_identity(raw), True))
    if found is None:
        return None
    if not (isinstance(found, (list, tuple)) and len(found) == 3 and all(isinstance(v, str) for v in found)):
        return _read_identity(raw)  # an entry not as this module writes it: read the bytes again
    return found[0], found[1], found[2]


def _read_identity(raw: bytes) -> tuple[str, str, str] | None:
    try:
        doc = yaml.to_plain(yaml.load(raw, "template"))
    except StatedirError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or doc.get("version") is None:
        return None
    return doc["name"], str(doc["version"]), template.content_digest(doc)


def shipped_known(cache_dir: Path | None = None) -> Known:
    """The name and version of every template statedir ships, with its content (`cache_dir`: identity's)."""
    out: Known = {}
    for path in template.shipped_files():
        found = identity(path.read_bytes(), cache_dir)
        if found is not None:
            out.setdefault(found[:2], Seen(found[2], "statedir ships it"))
    return out


def shipped_with(name: str, version: str | None) -> list[Template]:
    """The templates statedir ships under `name` in `version` (a shipped file is named
    `<name>.yaml`, or `<name>@<version>.yaml` for an older version it still ships)."""
    found = [template.load(str(path)) for path in template.shipped_files() if path.stem.partition("@")[0] == name]
    return [t for t in found if t.name == name and str(t.doc.get("version")) == str(version)]


def known(store: Store, rev: str | None = "HEAD") -> Known:
    """Every name and version seen: shipped, then stored anywhere in the store's history up
    to `rev` (the first content each was stored with; None: no history)."""
    out = shipped_known(store.cache_dir)
    if rev is None or not git.head(store.worktree):
        return out
    folder = store.git_path("templates")
    log = git.run(store.worktree, "log", "--reverse", "--raw", "--no-renames", "--no-abbrev", "-z",
                  "--format=%x1e%H", rev, "--", folder).stdout.decode("utf-8", "surrogateescape")
    stored: list[tuple[str, str, str]] = []  # (commit, path, blob id), oldest first
    for record in log.split("\x1e")[1:]:
        sha, _, raw = record.partition("\0")
        tokens = raw.lstrip("\n").split("\0")
        for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
            parts = meta.split()
            if len(parts) == 5 and parts[4][0] != "D" and path.endswith(".yaml"):
                stored.append((sha.strip(), path, parts[3]))
    blobs: list[tuple[str, str, bytes] | None] = []
    with objects.ObjectReader(store.worktree) as objs:
        for start in range(0, len(stored), 50):  # a batch fits git's pipe
            blobs += objs.read_many([oid for _, _, oid in stored[start:start + 50]])
    for (sha, path, _), found in zip(stored, blobs, strict=True):
        ident = identity(found[2], store.cache_dir) if found else None
        if ident is not None:
            out.setdefault(ident[:2], Seen(ident[2], f"commit {sha[:10]} stored it as {path}", sha))
    return out


def next_version(version: str) -> str:
    """A suggestion: the last number bumped ('3.21' -> '3.22', '1' -> '2'), else '.1' appended."""
    match = re.search(r"(\d+)$", version)
    return version[: match.start()] + str(int(match[1]) + 1) if match else f"{version}.1"


def conflict(seen: Known, name: str, version: str, digest: str) -> Seen | None:
    """Where `name` `version` was seen with other content than `digest`, or None."""
    first = seen.get((name, version))
    return first if first is not None and first.digest != digest else None


def refuse_other_content(store: Store, t: Template) -> None:
    """`new --template FILE`: refused (INVALID_VALUE) where the file's name and version were
    seen with other content."""
    version = t.doc.get("version")
    if version is None:
        return
    seen = known(store)
    first = conflict(seen, t.name, str(version), t.digest)
    if first is None:
        return
    suggestion = next_version(str(version))
    while (t.name, suggestion) in seen:
        suggestion = next_version(suggestion)
    raise InvalidValue(f"template {t.name!r} version {version} already has other content ({first.where}); a "
                       "name and version never change content: give your template a new version (e.g. "
                       f"`version: '{suggestion}'`) or another `name:`", template=t.name, version=str(version),
                       **({"commit": first.commit} if first.commit else {}))

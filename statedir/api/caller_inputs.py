"""What callers hand the API besides plain values: files to hash or read, issue texts, dotted paths."""
# Lazy imports: hashlib, json, api.material_fields: each method imports what its own call uses, so a call pays for its
#   own path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from statedir.errors import BadFile, InvalidValue
from statedir.files import yaml


def open_regular(path: str, what: str) -> Any:  # a binary file object (hashlib.file_digest reads it)
    """A named file opened for reading; a FIFO, device or directory is refused, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InvalidValue(f"cannot read {what} {path}: {exc.strerror}", file=path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidValue(f"{what} {path} is not a regular file", file=path)
    return os.fdopen(fd, "rb")


def in_repository(path: str, worktree: Path, what: str = "{opt:file}") -> str:
    """`path` (as typed, relative to the current directory) as a posix path relative to the
    repository root, so a passport means the same file in every clone; a file outside the
    repository is refused: no other clone could find it or check its hash. So is a link in the
    repository to a file outside it (one a hostile commit planted, say): what is read is the file
    outside, which no other clone holds."""
    target = Path(path).resolve()
    if not target.is_relative_to(worktree.resolve()):
        links = f" (a link to {target})" if Path(os.path.abspath(path)).is_relative_to(worktree) else ""
        raise InvalidValue(f"{what} {path}{links} is outside the repository {worktree}; a passport names files "
                           "every clone holds: copy or move it into the repository first", file=path)
    for candidate in (Path(os.path.abspath(path)), target):
        try:
            return candidate.relative_to(worktree).as_posix()
        except ValueError:
            continue
    raise InvalidValue(f"{what} {path} is outside the repository {worktree}; a passport names files every "
                       "clone holds: copy or move it into the repository first", file=path)


def lies_in(path: str, worktree: Path) -> bool:
    """Whether the file `path` names (links followed) is in the repository's work tree: a file of
    the project, whose contents an error may repeat (not any file the process can read)."""
    return Path(path).resolve().is_relative_to(worktree.resolve())


def file_hash(path: str, worktree: Path, *, with_fields: bool = False, what: str = "{opt:file}",
              limit: int | None = None) -> dict[str, Any]:
    """The repository-relative path and SHA-256 of a file, read in chunks (any size, no memory,
    unless `limit` bytes is its most); `with_fields`: also the fields it holds
    (statedir.api.material_fields), for its schema check. `what`: how the caller named it."""
    import hashlib

    from statedir.api import material_fields

    with open_regular(path, what) as f:
        where = in_repository(path, worktree, what)
        if limit is not None and os.fstat(f.fileno()).st_size > limit:
            raise InvalidValue(f"{what} {path} is over the size limit ({limit} bytes)", file=path, limit=limit)
        try:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
            if with_fields:
                f.seek(0)
                found = material_fields.fields(where, f)
        except OSError as exc:
            raise InvalidValue(f"cannot read {what} {path}: {exc.strerror}", file=path) from None
    return {"path": where, "content_hash": digest, **({"fields": found} if with_fields else {})}


def read_yaml_file(path: str) -> Any:
    with open_regular(path, "file") as f:
        try:
            raw = f.read(yaml.MAX_BYTES + 1)
        except OSError as exc:
            raise BadFile(f"cannot read {path}: {exc.strerror}", file=path) from None
    return yaml.to_plain(yaml.load(raw, path, quote=False))  # any file the caller names: never quoted


def parse_issue(text: str) -> dict[str, str]:
    parts = text.split(":", 2)
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise InvalidValue(f"{{opt:issue}} {text!r} must be SEVERITY:TYPE:DESCRIPTION", issue=text)
    return {"severity": parts[0].strip(), "type": parts[1].strip(), "description": parts[2].strip()}


def resolve(doc: Any, path: str) -> Any:
    """Walk a dotted path, trying the longest key first so `stages.2.5.status` finds stage 2.5."""
    parts = path.split(".")
    node, i = doc, 0
    while i < len(parts):
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            if isinstance(node, dict) and key in node:
                node, i = node[key], j
                break
            if isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node, i = node[int(key)], j
                break
        else:
            raise InvalidValue(f"no value at {path!r} (stopped at {'.'.join(parts[i:])!r})", path=path)
    return node


def current_hashes(worktree: Path, paths: dict[str, str]) -> dict[str, str | None]:
    """Each name's file (repository-relative) hashed again now (None: it is gone or unreadable)."""
    import hashlib

    out: dict[str, str | None] = {}
    for name, rel in paths.items():
        try:
            with open_regular(str(worktree / rel), "file") as f:
                out[name] = hashlib.file_digest(f, "sha256").hexdigest()
        except (InvalidValue, OSError):
            out[name] = None
    return out


def named_manifest(path: str) -> str | None:
    """The manifest SHA-256 a check report names (`manifest_sha256` of a JSON object), if any."""
    import json

    try:
        with open_regular(path, "{opt:file}") as f:
            doc = json.loads(f.read(1 << 20))
    except (InvalidValue, OSError, ValueError):
        return None
    value = doc.get("manifest_sha256") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else None

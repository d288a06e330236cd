"""Reading bound artifacts under an artifact root, safely, and hashing them for the seal.

A path is walked one component at a time from the root's descriptor with O_NOFOLLOW, so no
symlink (in the root, a directory or the file) and no `..` is ever followed; only single-linked
regular files within the size caps are read, as the ARS reader requires of what it re-hashes.
"""
from __future__ import annotations

import copy
import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from statedir.engine import adjudication_contract
from statedir.errors import BadFile, InvalidValue, StatedirError
from statedir.hints import opt

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def open_root(root: Path) -> int:
    """A descriptor on the artifact root: an existing directory that is not a symlink."""
    try:
        return os.open(root, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and root.is_symlink():
            raise InvalidValue(f"{opt('artifact_root')} {root} is a symlink; pass the directory itself",
                               artifact_root=str(root)) from None
        raise InvalidValue(f"{opt('artifact_root')} {root} is not a readable directory ({exc.strerror})",
                           artifact_root=str(root)) from None


def read(root_fd: int, relative: str, limit: int, artifact_id: str) -> bytes:
    """The bytes of one artifact, or BAD_FILE saying why it cannot be bound."""
    def refuse(why: str) -> StatedirError:
        return BadFile(f"artifact {artifact_id} ({relative}): {why}", artifact_id=artifact_id, relative_path=relative)

    problem = adjudication_contract.path_problem(relative)
    if problem:
        raise refuse(problem)
    parts = relative.split("/")
    opened: list[int] = []
    try:
        fd = root_fd
        for part in parts[:-1]:
            fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            opened.append(fd)
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
        opened.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse("not a regular file")
        if info.st_nlink != 1:
            raise refuse(f"a hard-linked file ({info.st_nlink} links); ARS re-reads only single-linked files")
        if info.st_size > limit:
            raise refuse(f"{info.st_size} bytes, over the cap ({_caps(limit)})")
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise refuse(f"grew past the cap while being read ({_caps(limit)})")
        return b"".join(chunks)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) or (exc.errno == errno.EMLINK):
            raise refuse("a symlink on its path; artifacts are read without following links") from None
        raise refuse(exc.strerror or str(exc)) from None
    finally:
        for fd in reversed(opened):
            os.close(fd)


def _caps(limit: int) -> str:
    return (f"{limit} bytes allowed: {adjudication_contract.MAX_ARTIFACT_BYTES >> 20} MiB an artifact, "
            f"{adjudication_contract.MAX_TOTAL_BYTES >> 20} MiB a run")


def hash_rows(root: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with each artifact's SHA-256 of its bytes under `root` (callers never pass hashes)."""
    sealed = copy.deepcopy(rows)
    root_fd = open_root(root)
    total = 0
    try:
        for row in sealed:
            for artifact in row["artifacts"]:
                remaining = min(adjudication_contract.MAX_ARTIFACT_BYTES, adjudication_contract.MAX_TOTAL_BYTES - total)
                raw = read(root_fd, artifact["relative_path"], remaining, artifact["artifact_id"])
                total += len(raw)
                artifact["sha256"] = hashlib.sha256(raw).hexdigest()
    finally:
        os.close(root_fd)
    return sealed

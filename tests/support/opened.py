"""The files a piece of code opens, recorded by an audit hook (what a transition reads and writes)."""
from __future__ import annotations

import os
import sys

OPENED: list[tuple[str, object, object]] = []


RECORDING = [False]


def _audit(event: str, args: tuple) -> None:
    if RECORDING[0] and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)) and not _hashing():
        OPENED.append((os.fsdecode(args[0]), args[1], args[2]))


def _hashing() -> bool:
    """Whether the open is the commit's hashing of a file into a blob (statedir.gitops.indexfile does
    git update-index's work in-process): git reads a committed file whole, whoever runs it."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith(os.path.join("statedir", "gitops", "indexfile.py")):
            return True
        frame = frame.f_back
    return False


sys.addaudithook(_audit)


def record(action) -> list[tuple[str, object, object]]:  # type: ignore[no-untyped-def]
    OPENED.clear()
    RECORDING[0] = True
    try:
        action()
    finally:
        RECORDING[0] = False
    return list(OPENED)


def reads(opened: list[tuple[str, object, object]], fragment: str) -> list[str]:
    out = []
    for path, mode, flags in opened:
        if fragment not in path:
            continue
        reading = (isinstance(mode, str) and "r" in mode) or (
            isinstance(flags, int) and flags & os.O_ACCMODE in (os.O_RDONLY, os.O_RDWR) and not flags & os.O_APPEND)
        if reading:
            out.append(path)
    return out

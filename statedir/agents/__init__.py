"""Instructions agents follow: a short guide for AGENTS.md / CLAUDE.md, written between markers
so a second run replaces it, and a SKILL.md for hosts that load skills."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from statedir.errors import InvalidValue, WriteFailed

HERE = Path(__file__).resolve().parent
BEGIN = "<!-- statedir:agents begin (written by `statedir agents --write`; edits inside are replaced) -->"
END = "<!-- statedir:agents end -->"


def guide() -> str:
    """The guide: which command for which moment, exit codes, error codes, refusals."""
    return (HERE / "guide.md").read_text(encoding="utf-8")


def skill() -> str:
    """The SKILL.md that replaces the prompt-only State Tracker with statedir commands."""
    return (HERE / "SKILL.md").read_text(encoding="utf-8")


def with_block(existing: str, block: str) -> str:
    """`existing` with the guide's block replaced, or appended when it has none."""
    fenced = f"{BEGIN}\n{block.rstrip()}\n{END}\n"
    begins, ends = existing.count(BEGIN), existing.count(END)
    if begins == ends == 0:
        return existing + ("\n" if existing and not existing.endswith("\n") else "") + \
            ("\n" if existing.strip() else "") + fenced
    start, stop = existing.find(BEGIN), existing.find(END)
    if begins != 1 or ends != 1 or stop < start:
        raise InvalidValue("the file's statedir:agents markers are damaged (each must appear once, begin "
                           "before end): mend them by hand or remove both", begins=begins, ends=ends)
    return existing[:start] + fenced.rstrip("\n") + existing[stop + len(END):]  # the rest kept byte for byte


def write(path: Path, text: str, *, whole: bool = False) -> dict[str, Any]:
    """Write `text` into `path` between the markers (or as the whole file); atomic."""
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidValue(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", file=str(path)) from None
    updated = text if whole else with_block(existing or "", text)
    action = "created" if existing is None else "unchanged" if updated == existing else "updated"
    if action != "unchanged":
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(updated, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise WriteFailed(f"cannot write {path}: {exc.strerror or exc}", file=str(path)) from None
    return {"file": str(path), "action": action}

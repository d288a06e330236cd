"""The merge driver git calls for one store file (`statedir merge-driver %O %A %B %P`).

What a file is comes from its path through the store's schema lookup (`store.schema_for`):
a `log-*` file merges as a union of entries, any other owned file field by field by its
schema's `x-merge` rules; a file statedir does not own gets git's own line merge. A merge the
rules refuse writes a conflict report into the file (git's conflict markers around both whole
sides, so nothing of either is lost) and exits 1: git then shows the file as conflicted.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statedir.engine import run_shape, template
from statedir.errors import StatedirError
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.hints import HINT, Hint, said
from statedir.merge import logs, rules
from statedir.store import layout

MARKER = "<<<<<<< "


@dataclass
class Outcome:
    """A merged file: its bytes, and the fields the rules could not merge (empty: clean)."""

    data: bytes
    conflicts: list[rules.Conflict] = field(default_factory=list)
    note: str | None = None  # why the whole file was refused (unreadable side, not owned, ...)

    @property
    def clean(self) -> bool:
        return not self.conflicts and self.note is None


def store_root(path: Path) -> Path | None:
    """The store holding a repository path: the nearest directory with statedir.yaml."""
    for directory in path.parents:
        if (directory / layout.CONFIG).is_file():
            return directory
    return None


def read_plain(raw: bytes | None, rel: str) -> Any:
    """A side's file as plain data (MISSING where the side has no such file)."""
    if raw is None:
        return rules.MISSING
    own = yaml_fast_reader.read_own(raw, layout.own_ref(rel, raw))
    return own if own is not yaml_fast_reader.FOREIGN else yaml.to_plain(yaml.load(raw, rel))


def _template(root: Path | None, rel: str, state_raw: bytes | None) -> Any:
    """A run file's template (None where it cannot be read): the template the run's state names
    (`state_raw`, else the work tree's state.yaml)."""
    parts = rel.split("/")
    if root is None or len(parts) < 3 or parts[0] != "runs":
        return None
    try:
        state_rel = f"runs/{parts[1]}/state.yaml"
        state = read_plain(state_raw if state_raw is not None else (root / state_rel).read_bytes(), state_rel)
        return template.load(state["template"], root / "templates", allow_path=False)
    except (OSError, StatedirError, KeyError, TypeError):
        return None


def _filled(t: Any, kind: str, rel: str, sides: list[Any]) -> tuple[list[Any], bool]:
    """The three sides with what each leaves out at its defaults filled in (a stage file made on
    both sides merges over the stage as it starts), and whether a side was in the written shape
    (statedir.engine.run_shape): the merge is then written in it too."""
    stage_id = rel.rpartition("/")[2][:-5]
    if t is None or (kind == "stage" and stage_id not in t.stage_ids):
        return sides, False
    out, shaped = [], False
    for i, side in enumerate(sides):
        if kind == "stage" and side is rules.MISSING and i == 0:
            out.append(run_shape.stage_default(t, stage_id))
        elif isinstance(side, dict):
            full = run_shape.filled_state(t, side) if kind == "run-state" else run_shape.filled_stage(t, stage_id, side)
            shaped = shaped or (i > 0 and full != side)
            out.append(full)
        else:
            out.append(side)
    return out, shaped


def merge_file(rel: str, base: bytes | None, ours: bytes | None, theirs: bytes | None,
               root: Path | None = None, state: bytes | None = None) -> Outcome:
    """Merge one store file's three versions (None: the file is absent on that side); `state`:
    the run's state.yaml, whose template orders a stage's statuses (default: the work tree's)."""
    kind = layout.schema_for(rel)
    if kind is None:
        return _line_merge(base, ours, theirs)
    if ours == theirs:
        return Outcome(ours or b"")
    try:
        if kind.startswith("log-"):
            return Outcome(logs.merge(rel, base, ours, theirs))
        old, mine, other = (read_plain(raw, rel) for raw in (base, ours, theirs))
    except StatedirError as exc:
        return Outcome(ours or b"", note=f"a side cannot be read: {exc.message}")
    node = schema.load_schema(kind)
    t = _template(root, rel, state) if kind in ("stage", "run-state") else None
    shaped = False
    if t is not None:
        (old, mine, other), shaped = _filled(t, kind, rel, [old, mine, other])
    ctx = rules.Context(root=node, further=rules.further_by_moves(t.moves) if t is not None and kind == "stage"
                        else None)
    merged = rules.merge(old, mine, other, rules.resolve(node, node), ctx)
    if ctx.conflicts:
        return Outcome(ours or b"", conflicts=ctx.conflicts, note=_two_versions(kind, old, mine, other))
    if merged is rules.MISSING:  # deleted on both sides, or on one side and unchanged on the other
        return Outcome(b"", note=None) if ours is None or theirs is None else Outcome(ours)
    if shaped and isinstance(merged, dict):
        merged = run_shape.written(t, rel, merged)
    ref_side = ours if ours is not None else theirs
    return Outcome(yaml.dump(merged, layout.own_ref(rel, ref_side)).encode("utf-8"))


def _two_versions(kind: str, base: Any, ours: Any, theirs: Any) -> str | None:
    """Why a passport made on both sides is refused here: two versions took one label."""
    if kind != "passport" or base is not rules.MISSING or not isinstance(ours, dict) or not isinstance(theirs, dict):
        return None
    return (f"version {ours.get('version_label')} was registered on both sides with different content; "
            f"`{HINT}` gives the later one the next free label (git's own merge cannot rename a file)")


def _line_merge(base: bytes | None, ours: bytes | None, theirs: bytes | None) -> Outcome:
    """git's own three-way line merge, for files statedir does not own."""
    with tempfile.TemporaryDirectory(prefix="statedir-merge-") as tmp:
        paths = []
        for name, raw in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(raw or b"")
            paths.append(str(path))
        proc = subprocess.run(["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", *paths],
                              capture_output=True, check=False)
    if proc.returncode == 0:
        return Outcome(proc.stdout)
    return Outcome(proc.stdout, note="the line merge left conflicts")


# A note's next step (`{hint}`): sync, said in the caller's words where sync reports the conflict,
# and as a command line in the conflict report git leaves in the file (read with git, by a person).
_SYNC = Hint("sync")
_SYNC_FOR_GIT = "statedir sync"


def report(rel: str, outcome: Outcome, ours: bytes | None, base: bytes | None, theirs: bytes | None) -> bytes:
    """A conflicted file: a line naming what was refused, then both whole sides (and the base)
    between git's conflict markers, so git shows a conflict and nothing of either side is lost."""
    changed = "fields " + ", ".join(c.path for c in outcome.conflicts) + " changed on both sides"
    note = outcome.note.replace(HINT, _SYNC_FOR_GIT) if outcome.note else None
    why = "; ".join(part for part in (changed if outcome.conflicts else None, note) if part)
    text = [f"{MARKER}ours: statedir refused to merge {rel}: {why}. Keep the side you want (or a legal mix), "
            "remove the markers, `git add` the file and commit; or `git merge --abort`\n"]
    for label, raw in (("", ours), ("||||||| base\n", base), ("=======\n", theirs)):
        chunk = (raw or b"").decode("utf-8", "replace")
        text.append(label + chunk + ("" if chunk.endswith("\n") or not chunk else "\n"))
    text.append(">>>>>>> theirs\n")
    return "".join(text).encode("utf-8")


def describe(rel: str, outcome: Outcome) -> dict[str, Any]:
    """One refused file, structured: {run, file, fields: [{field, rule, ours, theirs, base}]}."""
    parts = rel.split("/")
    return {"run": parts[1] if len(parts) > 2 and parts[0] == "runs" else None, "file": rel,
            "reason": said(outcome.note, _SYNC) if outcome.note else None,
            "fields": [c.as_dict() for c in outcome.conflicts]}


def run(base_path: str, ours_path: str, theirs_path: str, repo_path: str) -> int:
    """What `statedir merge-driver %O %A %B %P` does: the merge into %A; 0 clean, 1 refused."""
    worktree = Path.cwd()
    root = store_root(worktree / repo_path)
    rel = (worktree / repo_path).relative_to(root).as_posix() if root else repo_path
    sides = []
    for path in (base_path, ours_path, theirs_path):
        raw = Path(path).read_bytes()
        sides.append(raw if raw else None)
    base, ours, theirs = sides
    outcome = merge_file(rel, base, ours, theirs, root)
    target = Path(ours_path)
    if outcome.clean:
        target.write_bytes(outcome.data)
        return 0
    target.write_bytes(outcome.data if outcome.note == "the line merge left conflicts"
                       else report(rel, outcome, ours, base, theirs))
    return 1


def main(args: list[str]) -> int:
    """`python -m statedir merge-driver %O %A %B %P` without the CLI around it: 0 merged,
    1 refused (the conflict report is in %A), 2 when the files cannot be read."""
    try:
        code = run(*args)
    except (OSError, StatedirError) as exc:
        sys.stderr.write(f"statedir merge-driver: {getattr(exc, 'message', None) or exc}\n")
        return 2
    if code:
        sys.stderr.write(f"statedir merge-driver: refused to merge {args[3]}; the file holds a conflict report\n")
    return code

"""The store's object database kept healthy without the user's help.

statedir runs git with `gc.auto=0` (a transition never pays for a repack inside the store
lock) and libgit2 writes loose objects, so without care a busy store piles them up: a 5,000-run
store held 180,708 loose objects, `git log -- PATH` read them one file at a time, and the
user's first own `git commit` set off a 40 s `gc --auto`. Instead:

- After a commit, outside the store lock, `due` looks at one of the object database's 256
  fan-out folders (one `scandir`, as git's own `gc --auto` estimates) and, past `TRIGGER`
  objects there (about 2,000 in all, a third of git's own threshold, so a user's `git commit`
  never finds a pile), `start` runs the maintenance detached: `git gc --auto` (loose objects
  packed, packs consolidated past `PACK_LIMIT`, under git's own gc.pid lock) and then the
  commit-graph with changed-path Bloom filters (`log RUN` and `versions` read only the commits
  that touched their path). Nothing of the caller waits for it; a second start while one runs
  finds git's locks taken and does nothing.
- `report` says what `statedir doctor` shows; `repair` runs the same maintenance in the
  foreground (`doctor --fix`).
"""
from __future__ import annotations

import os
from pathlib import Path

from statedir.gitops import git, process

SAMPLE = "17"  # the fan-out folder git's gc --auto counts too
TRIGGER = 8  # objects in SAMPLE: about 8 x 256 = 2,048 loose objects in all
LOOSE_LIMIT = 1000  # gc.auto for the maintenance run: pack once about this many are loose
PACK_LIMIT = 20  # gc.autoPackLimit: consolidate once there are more packs than this
UNHEALTHY_LOOSE = 4000  # doctor's threshold: twice what maintenance lets accumulate
GRAPH_COMMITS = 5000  # doctor asks for a commit-graph from this much history on (below it git walks fast)
# Fixed options, never from the store: no hook runs, gc neither detaches nor waits on a prompt.
_OPTIONS = (*git.QUIET, "-c", f"gc.auto={LOOSE_LIMIT}", "-c", f"gc.autoPackLimit={PACK_LIMIT}",
            "-c", "gc.autoDetach=false", "-c", "gc.writeCommitGraph=false")


def objects_dir(worktree: Path) -> Path:
    return git.common_dir(git.git_dir(worktree)) / "objects"


def _sampled(objects: Path) -> int:
    try:
        with os.scandir(objects / SAMPLE) as entries:
            return sum(1 for entry in entries if len(entry.name) >= 38)
    except OSError:
        return 0


def due(worktree: Path) -> bool:
    """Whether enough loose objects have piled up to pack them (one directory listing)."""
    try:
        return _sampled(objects_dir(worktree)) > TRIGGER
    except (OSError, ValueError):
        return False


def _commands(worktree: Path) -> list[list[str]]:
    top = str(worktree)
    return [["git", "-C", top, *_OPTIONS, "gc", "--auto", "--quiet"],
            ["git", "-C", top, *git.QUIET, "commit-graph", "write", "--reachable", "--changed-paths", "--split",
             "--no-progress"]]


def start(worktree: Path) -> None:
    """Run the maintenance detached from the caller (a session of its own, no terminal, no
    descriptor of the caller's), one step after the other; errors are git's to log, not ours."""
    # sh runs the fixed steps in order, in the background from `/`, and returns at once (the steps
    # left to nobody: no caller waits for them, none is left unreaped): every word is a constant of
    # this module's, the work tree is the one positional ("$1"), never parsed by the shell.
    steps = "; ".join('git -C "$1" ' + " ".join(_quoted(tuple(command[3:]))) for command in _commands(worktree))
    try:
        process.detach(["sh", "-c", f"cd / && {{ {steps}; }} &", "statedir-maintenance", str(worktree)])
    except OSError:
        pass  # no sh, no fork: the store stays correct, only slower; doctor reports it


def _quoted(options: tuple[str, ...]) -> list[str]:
    """git's fixed options as shell words (each a constant of this module or of git.QUIET)."""
    return ["'" + option.replace("'", "'\\''") + "'" for option in options]


def report(worktree: Path) -> dict[str, object]:
    """{loose, packs, commit_graph, changed_paths}: what the object database holds now."""
    objects = objects_dir(worktree)
    loose = 0
    for fanout in range(256):
        try:
            with os.scandir(objects / f"{fanout:02x}") as entries:
                loose += sum(1 for entry in entries if len(entry.name) >= 38)
        except OSError:
            continue
    pack_dir = objects / "pack"
    packs = len(list(pack_dir.glob("*.pack"))) if pack_dir.is_dir() else 0
    info = objects / "info"
    chain = info / "commit-graphs" / "commit-graph-chain"
    graph = (info / "commit-graph").is_file() or chain.is_file()
    return {"loose": loose, "packs": packs, "commit_graph": graph, "changed_paths": graph and _has_bloom(info)}


def _has_bloom(info: Path) -> bool:
    """Whether the commit-graph carries changed-path Bloom filters (its BIDX chunk)."""
    files = [info / "commit-graph", *sorted((info / "commit-graphs").glob("graph-*.graph"))]
    for file in files:
        try:
            with file.open("rb") as handle:
                head = handle.read(8 + 12 * 16)  # the header and the chunk table's first entries
        except OSError:
            continue
        if b"BIDX" in head:
            return True
    return False


def problems(worktree: Path, commits: int) -> list[str]:
    """What doctor reports: a pile of loose objects, too many packs, no commit-graph (or one
    without changed paths) in a store with some history."""
    found = report(worktree)
    out = []
    if int(found["loose"]) > UNHEALTHY_LOOSE:  # type: ignore[call-overload]
        out.append(f"{found['loose']} loose objects (maintenance keeps them under about {TRIGGER * 256})")
    if int(found["packs"]) > 2 * PACK_LIMIT:  # type: ignore[call-overload]
        out.append(f"{found['packs']} packs (maintenance consolidates them past {PACK_LIMIT})")
    if commits >= GRAPH_COMMITS and not found["changed_paths"]:
        out.append("no commit-graph with changed-path filters: `log RUN` reads every commit")
    return out


def repair(worktree: Path) -> None:
    """The maintenance in the foreground, whole (doctor --fix): every loose object packed, the
    packs made one, the commit-graph written with its changed paths."""
    git.run(worktree, *_OPTIONS, "gc", "--quiet")
    git.run(worktree, "commit-graph", "write", "--reachable", "--changed-paths", "--split", "--no-progress")

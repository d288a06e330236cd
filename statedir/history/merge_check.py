"""verify's check of a merge commit: its store files must be what the statedir merge driver
gives from its parents (and their merge base), and a run where both sides registered versions
what statedir.merge.versions gives its folder. A file resolved by hand, or merged line by line
where the driver was not registered, is reported as kind `illegal_merge`. What the merge must
hold is statedir.merge.expected's to decide; this module reads the commits it decides on."""
from __future__ import annotations

from typing import Any

from statedir.gitops import git
from statedir.history.snapshot import CommitReader
from statedir.merge import driver, versions
from statedir.merge.expected import VERSIONED, expected, registered_on_both


def _changed(reader: CommitReader, a: str | None, b: str) -> set[str]:
    """Store-relative paths that differ between two commits (all of b's where a is None)."""
    store = reader.store
    args = ["diff-tree", "-r", "--no-renames", "--name-only", "-z"]
    args += [a, b] if a else ["--root", b]
    out = git.run(store.worktree, *args, "--", store.git_path(".")).stdout.decode("utf-8", "surrogateescape")
    prefix = "" if store.prefix == "." else store.prefix + "/"
    names = [n for n in out.split("\0") if n and n != b]
    return {n[len(prefix):] for n in names if n.startswith(prefix)}


def check(reader: CommitReader, sha: str, parents: list[str],
          found: dict[str, bytes | None | bool] | None = None) -> list[dict[str, Any]]:
    """Findings [{commit, kind, file, message}] for one merge commit (two parents; more are
    folded in order, as an octopus merge does); `found`: its `wrong` files, where known."""
    findings: list[dict[str, Any]] = []
    for rel, want in sorted((wrong(reader, sha, parents) if found is None else found).items()):
        reason = "cannot be merged by the rules (a conflict resolved by hand?)" if want is False else \
            "is not what the statedir merge driver gives from the merge's parents (resolved by hand, or merged " \
            "line by line where the driver was not registered)"
        findings.append({"commit": sha, "kind": "illegal_merge", "file": rel,
                         "message": f"the merge's {rel} {reason}"})
    if len(parents) > 2:
        findings.append({"commit": sha, "kind": "illegal_merge", "file": None,
                         "message": f"an octopus merge of {len(parents)} parents; sync merges one remote at a time"})
    return findings


def wrong(reader: CommitReader, sha: str, parents: list[str]) -> dict[str, bytes | None | bool]:
    """The store files a two-parent merge commit holds other than the driver gives from its
    parents: path -> what it should hold (None: absent; False: the rules refuse, no content is
    legal). Empty for a merge of more than two parents (the octopus is its own finding)."""
    store = reader.store
    out: dict[str, bytes | None | bool] = {}
    ours = parents[0]
    for theirs in parents[1:2] if len(parents) == 2 else []:
        proc = git.run(store.worktree, "merge-base", ours, theirs, check=False)
        base = proc.stdout.decode().split()[0] if proc.returncode == 0 and proc.stdout.strip() else None
        mine, other = _changed(reader, base, ours), _changed(reader, base, theirs)
        paths = mine | other | _changed(reader, ours, sha)
        folders = {run: versioned(reader, (base, ours, theirs), run) for run in registered_on_both(mine & other)}
        for rel in sorted(paths):
            specs = [reader.spec(c, rel) if c else "" for c in (base, ours, theirs, sha)]
            found = reader.objects.read_many([s for s in specs if s])
            if base is None:
                found.insert(0, None)
            b, o, t, m = (f[2] if f and f[1] == "blob" else None for f in found)
            match = VERSIONED.match(rel)
            folder = folders.get(match["run"]) if match else None
            want: bytes | None | bool
            if folder is not None:  # versions registered on both sides: the run's folder merged whole
                outcome = folder.get(rel)
                want = None if outcome is None else outcome.data if outcome.clean else False
            else:
                want = expected(rel, b, o, t, reader.store.root)
            if not (want is None and m is None or want == m):
                out[rel] = want
    return out


def versioned(reader: CommitReader, commits: tuple[str | None, str, str], run: str) -> dict[str, driver.Outcome] | None:
    """The merge of run `run`'s state, stages and passports at (base, ours, theirs) where two
    versions claimed one label (statedir.merge.versions); None where each file merges alone."""
    sides = []
    for commit in commits:
        listing = reader.files(commit, f"runs/{run}") if commit else {}
        wanted = {rel: oid for rel, oid in listing.items() if VERSIONED.match(rel)}
        sides.append({rel: reader.raw(oid) for rel, oid in wanted.items()})
    return versions.merge(sides[0], sides[1], sides[2], reader.store.root)

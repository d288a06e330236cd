"""The state a hand-resolved merge should have left: its store files as the statedir merge driver
gives them from its parents. verify replays every commit after such a merge on that state, not
on the hand's files, so a transition legal only under what the hand planted stays `illegal`,
whether or not `doctor --fix` later repaired the merge (statedir.history.merge_repair). What each
file must hold is statedir.merge.expected's `fixed`."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from statedir.engine.template import identity as template_identity
from statedir.gitops import git


@dataclass
class HandMerges:
    """The hand merges verify has met so far: merge -> path -> (the hand's bytes, the driver's),
    and which commits descend from each."""

    forged: dict[str, dict[str, tuple[bytes | None, bytes | None]]] = field(default_factory=dict)
    after: dict[str, set[str]] = field(default_factory=dict)
    planted: set[str] = field(default_factory=set)  # digests of the templates a hand put in a merge
    repaired: dict[str, set[str]] = field(default_factory=dict)  # merge -> its repair and what follows it

    def met(self, worktree: Path, sha: str, files: dict[str, tuple[bytes | None, bytes | None]],
            seen: template_identity.Known) -> None:
        """A hand merge `sha` whose files `files` the driver gives otherwise; `seen`: the templates
        history held before it (one the hand put there is planted only if it is new)."""
        if not files:
            return
        out = git.run(worktree, "rev-list", "--ancestry-path", f"{sha}..HEAD").stdout.decode()
        self.forged[sha] = files
        self.after[sha] = set(out.split())
        for rel, (merged, _) in files.items():
            found = template_identity.identity(merged) if merged and rel.startswith("templates/") else None
            if found is not None and (found[:2] not in seen or template_identity.conflict(seen, *found)):
                self.planted.add(found[2])

    def repair(self, worktree: Path, merge: str, sha: str) -> None:
        """A repair commit `sha` of the hand merge `merge`: from it on, the files are the driver's."""
        if merge in self.forged:
            out = git.run(worktree, "rev-list", "--ancestry-path", f"{sha}..HEAD").stdout.decode()
            self.repaired[merge] = {sha, *out.split()}

    def at(self, commit: str | None) -> dict[str, tuple[bytes | None, bytes | None]]:
        """The forged files in force at `commit` (a later merge's word on a path wins)."""
        out: dict[str, tuple[bytes | None, bytes | None]] = {}
        if commit is None:
            return out
        for sha, files in self.forged.items():
            if (commit == sha or commit in self.after[sha]) and commit not in self.repaired.get(sha, ()):
                out.update(files)
        return out

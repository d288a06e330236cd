"""The signers each commit is held to, replayed from the root of trust.

The root is the first signers.yaml in history, signed by a key it lists. From there a change
to the file counts only where its signature satisfies `signers.may_change` as of the signers
trusted before it (a binding changes with a key of the actor it binds). A change that does
not is reported, and does not count: the commits after it are held to the signers trusted
before it, whatever the file now says, so a key that bound itself to another actor never
signs for that actor.

The commits that changed the file, in all of history, are read with one `git log` and judged
in order, the first time a commit needs them (never in a store whose history has no file).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from statedir.errors import StatedirError
from statedir.files.signers_file import FILE, Signers, may_change, parse
from statedir.gitops import git
from statedir.gitops.objects import ObjectReader
from statedir.store.store import Store

Finding = dict[str, Any]
# (commit, the keys one of which must sign it, the rule in words, the version binding them) -> findings
Judge = Callable[[str, set[str], str, Signers], list[Finding]]


class Trust:
    """The replayed signers as of any commit; `findings(sha)` are a change's own."""

    def __init__(self, store: Store, objects: ObjectReader, judge: Judge) -> None:
        self.store = store
        self.objects = objects
        self.judge = judge
        self.path = store.git_path(FILE)
        self.loaded = False
        self._after: dict[str, Signers | None] = {}  # a commit that changed the file -> trusted after it
        self._findings: dict[str, list[Finding]] = {}
        self._producers: dict[str | None, list[str]] = {}  # the file's blob (None: none) -> commits leaving it
        self._blobs: dict[str, str | None] = {}
        self._versions: dict[str, Signers | str] = {}  # blob -> parsed, or why it is not a valid file
        self._at: dict[str, Signers | None] = {}

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        out = git.run(self.store.worktree, "log", "--reverse", "--topo-order", "--full-history", "--format=%H %P",
                      "--", self.path).stdout.decode()
        for line in out.splitlines():
            sha, *parents = line.split()
            self._settle(sha, parents)

    def findings(self, sha: str, parents: list[str]) -> list[Finding]:
        """The findings of a commit that changed the file (judged now if the log left it out)."""
        self.load()
        if sha not in self._findings:
            self._settle(sha, parents)
        return self._findings[sha]

    def at(self, sha: str, blob: str | None) -> Signers | None:
        """The signers trusted as of commit `sha`, whose file is the blob `blob` (None: none)."""
        self.load()
        if sha in self._at:
            return self._at[sha]
        producers = self._producers.get(blob, [])
        states = [self._after[p] for p in producers] + ([None] if blob is None else [])
        if not states:  # a version older than the history at hand (a shallow clone): as it is
            trusted = self._version(blob)
        elif all(state == states[0] for state in states):
            trusted = states[0]
        else:  # the same bytes left by commits trusted differently (a version forged back): ask which
            last = git.run(self.store.worktree, "log", "-1", "--topo-order", "--format=%H", sha, "--",
                           self.path).stdout.decode().strip()
            trusted = self._after[last] if last in self._after else (self._version(blob) if blob else None)
        self._at[sha] = trusted
        return trusted

    def blob(self, sha: str) -> str | None:
        if sha not in self._blobs:
            found = self.objects.read(f"{sha}:{self.path}")
            self._blobs[sha] = found[0] if found and found[1] == "blob" else None
        return self._blobs[sha]

    def _settle(self, sha: str, parents: list[str]) -> None:
        blob = self.blob(sha)
        if len(parents) > 1:
            self._after[sha], self._findings[sha] = self._merged(blob, parents), []
        else:
            before = self.at(parents[0], self.blob(parents[0])) if parents else None
            self._after[sha], self._findings[sha] = self._changed(sha, before, blob)
        self._producers.setdefault(blob, []).append(sha)

    def _changed(self, sha: str, before: Signers | None, blob: str | None) -> tuple[Signers | None, list[Finding]]:
        after = self._version(blob) if blob else Signers()  # a deleted file binds nobody
        if after is None:
            return before, [_finding(sha, f"its new {FILE} is not valid ({self._versions[str(blob)]}), so it does "
                                          "not count")]
        keys, rule, binding = may_change(before, after)
        if not keys:
            return before, [_finding(sha, f"{rule}: no one key may sign that change")]
        found = self.judge(sha, keys, rule, binding)
        return (before if found else after if blob else None), found

    def _merged(self, blob: str | None, parents: list[str]) -> Signers | None:
        """A merge takes one side's version as that side trusted it; a version of its own only
        where every side's is trusted as it stands (else the merge check reports it)."""
        for parent in parents:
            if self.blob(parent) == blob:
                return self.at(parent, blob)
        if all(self.at(p, self.blob(p)) == (self._version(self.blob(p)) if self.blob(p) else None) for p in parents):
            return self._version(blob) if blob else None
        return self.at(parents[0], self.blob(parents[0]))

    def _version(self, blob: str | None) -> Signers | None:
        if blob is None:
            return None
        if blob not in self._versions:
            found = self.objects.read(blob)
            try:
                self._versions[blob] = parse(found[2] if found else b"")
            except StatedirError as exc:
                self._versions[blob] = exc.message
        version = self._versions[blob]
        return version if isinstance(version, Signers) else None


def _finding(sha: str, message: str) -> Finding:
    return {"commit": sha, "kind": "signature", "file": FILE, "message": message}

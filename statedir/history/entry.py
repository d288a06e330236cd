"""Where a commit enters history, the signing policy in force there holds it too. Each commit is
checked against the signers trusted at its own parent (statedir.history.signatures); a branch cut
before signers.yaml existed, or before a key was removed, would carry unsigned or revoked-key
commits into a signed history by a merge. So:

- a merge holds each commit it brings in (reachable from another parent, not from the first) to
  the signers trusted at its first parent (or, where that parent binds nobody and another does,
  at that other parent: the side a merge brings signing from is the one whose policy counts);
- a sync holds every commit it takes to the signers trusted at the HEAD it started from.

A commit entering passes when it is signed by a key trusted for its actor there, or at the merge
(the new HEAD) itself, so a rotation the other side made in a signed change passes, and a key
removed before the merge does not. One `git rev-list` per merge, only where a parent binds a key.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from statedir.files.signers_file import FILE, Signers
from statedir.gitops import git
from statedir.store.recorded import Commit

if TYPE_CHECKING:
    from statedir.signing.trust import Trust
    from statedir.store.store import Store


class SignatureCheck(Protocol):
    """What the entry checks ask of verify's signature check (statedir.history.signatures.Auditor)."""

    store: Store
    trust: Trust

    def trusted_at(self, sha: str | None) -> Signers | None:
        """The signers trusted as of commit `sha`, replayed from the root of trust."""
        ...

    def pending(self, sha: str, keys: set[str], signers: Signers, rule: str, file: str | None = None) -> list[Any]:
        """The findings (and Futures of them) unless commit `sha` is signed by one of `keys`."""
        ...


class Entry:
    """The commits seen so far (actor, the keys their own parent asked for) and their entry checks."""

    def __init__(self, auditor: SignatureCheck) -> None:
        self.auditor = auditor
        self.seen: dict[str, tuple[str | None, frozenset[str]]] = {}
        self._done: set[tuple[str, frozenset[str]]] = set()

    def note(self, commit: Commit, bound: set[str]) -> None:
        self.seen[commit.sha] = (commit.actor or None, frozenset(bound))

    def merge(self, merge: Commit) -> list[Any]:
        """The entry findings of the commits `merge` brings in (dicts and Futures)."""
        trust = self.auditor.trust
        if not trust.loaded and all(trust.blob(p) is None for p in merge.parents):
            return []  # no signers.yaml at any parent: nobody is bound where they enter
        trusted = [self.auditor.trusted_at(p) for p in merge.parents]
        policy = next((i for i, t in enumerate(trusted) if t is not None and t.entries), None)
        if policy is None:
            return []
        held = merge.parents[policy]
        where = f"the merge {merge.sha[:10]}'s {'first' if policy == 0 else 'signed'} parent {held[:10]}"
        others = [p for p in merge.parents if p != held]
        brought = git.run(self.auditor.store.worktree, "rev-list", *others, f"^{held}", "--").stdout.decode().split()
        return self._hold(brought, trusted[policy], self.auditor.trusted_at(merge.sha), where)  # type: ignore[arg-type]

    def taken(self, shas: Iterable[str], start: str, head: str) -> list[Any]:
        """The entry findings of the commits a sync took onto `start` (this clone's HEAD before)."""
        trust = self.auditor.trust
        if not trust.loaded and trust.blob(start) is None:
            return []
        policy = self.auditor.trusted_at(start)
        if policy is None or not policy.entries:
            return []
        return self._hold(shas, policy, self.auditor.trusted_at(head), f"this clone's HEAD before, {start[:10]}")

    def _hold(self, shas: Iterable[str], policy: Signers, result: Signers | None, where: str) -> list[Any]:
        out: list[Any] = []
        for sha in shas:
            actor, bound = self.seen.get(sha, (None, frozenset()))
            need = policy.keys_of(actor) if actor else set()
            if not need:
                continue
            allowed = frozenset(need | (result.keys_of(actor) if result and actor else set()))
            if (bound and bound <= allowed) or (sha, allowed) in self._done:
                continue  # its own check asked for as much, or this one was made already
            self._done.add((sha, allowed))
            extra = [e for e in (result.entries if result else []) if e not in policy.entries]
            signers = Signers([*policy.entries, *extra]) if extra else policy
            out += self.auditor.pending(sha, set(allowed), signers,
                                        f"{actor!r} is bound to a signing key in {FILE} where the commit entered "
                                        f"history ({where})")
        return out

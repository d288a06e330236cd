"""doctor's repair of a merge resolved by hand (a clone without the merge driver merged store
files line by line and someone kept both sides): the merge's store files merged again by the
driver from its two parents, committed as ONE new `doctor` commit whose `Statedir-Repairs-Merge`
trailer names the merge. History is not rewritten: verify replays the repair commit (the same
re-merge) and from then on reports the old merge under `repaired`, not as a finding, so every
clone's sync passes it again. A merge whose parents the rules refuse to merge is not repairable
by doctor: it is named, and nothing is changed."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statedir.errors import ValidationFailed
from statedir.gitops import commit_message, git, objects
from statedir.history import merge_check
from statedir.history.snapshot import CommitReader
from statedir.merge.expected import fixed
from statedir.store.store import Store
from statedir.store.write import persist

if TYPE_CHECKING:
    from statedir.store.recorded import Commit

TRAILER = "Statedir-Repairs-Merge"
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_CLEAN_CACHE = "merges-checked"  # merge commits already found legal: a sha's verdict never changes


@dataclass
class HandMerge:
    """A merge commit whose store files differ from the driver's: path -> the fixed bytes (None:
    absent), or a string saying why that file cannot be fixed."""

    sha: str
    fixed: dict[str, bytes | None | str]

    @property
    def refusals(self) -> dict[str, str]:
        return {rel: why for rel, why in self.fixed.items() if isinstance(why, str)}


def _parents(store: Store, sha: str) -> list[str]:
    words = git.run(store.worktree, "rev-list", "--parents", "-n", "1", sha).stdout.decode().split()
    return words[1:]


def examine(reader: CommitReader, sha: str, parents: list[str], at: str) -> HandMerge | None:
    """The hand merge `sha` as it is to be repaired on top of commit `at` (None: it is legal)."""
    wrong = merge_check.wrong(reader, sha, parents)
    if not wrong:
        return None
    rels = sorted(wrong)
    found = reader.objects.read_many([reader.spec(c, rel) for c in (sha, at) for rel in rels])
    blobs = [f[2] if f and f[1] == "blob" else None for f in found]
    return HandMerge(sha, {rel: fixed(rel, wrong[rel], blobs[i], blobs[len(rels) + i])
                           for i, rel in enumerate(rels)})


def repaired_merges(store: Store) -> dict[str, str]:
    """Merge -> the repair commit naming it, for every repair commit in HEAD's history."""
    out = git.run(store.worktree, "log", "-E", f"--grep=^{TRAILER}: ", "--format=%H%x1f%(trailers:key="
                  f"{TRAILER},valueonly,separator=%x2C)", "HEAD", check=False).stdout.decode()
    pairs = (line.split("\x1f") for line in out.splitlines() if "\x1f" in line)
    return {merge.strip(): sha for sha, merge in pairs if merge.strip()}


def hand_merges(store: Store) -> list[HandMerge]:
    """The merges in HEAD's history that touched the store by hand and have no repair yet."""
    if not git.head(store.worktree):
        return []
    out = git.run(store.worktree, "log", "--merges", "--topo-order", "--reverse", "--format=%H %P", "HEAD",
                  "--", store.git_path(".")).stdout.decode()
    merges = [line.split() for line in out.splitlines() if len(line.split()) == 3]
    cache = store.cache_dir / _CLEAN_CACHE
    try:
        legal = set(cache.read_text().split())
    except OSError:
        legal = set()
    done = repaired_merges(store)
    head = git.head(store.worktree) or ""
    found, newly_legal = [], []
    with objects.ObjectReader(store.worktree) as objs:
        reader = CommitReader(store, objs)
        for sha, *parents in merges:
            if sha in legal or sha in done:
                continue
            hand = examine(reader, sha, parents, head)
            if hand is None:
                newly_legal.append(sha)
            else:
                found.append(hand)
    if newly_legal:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            with cache.open("a") as f:
                f.write("".join(f"{sha}\n" for sha in newly_legal))
        except OSError:
            pass  # a cache only: the next doctor checks them again
    return found


def findings(store: Store, actor: str, timeout: float | None) -> list[dict[str, Any]]:
    """doctor's findings: one per hand merge, with a repair where every file can be fixed."""
    out = []
    for hand in hand_merges(store):
        files = ", ".join(sorted(hand.fixed))
        message = (f"merge {hand.sha[:10]} was resolved by hand (or merged line by line without the statedir "
                   f"merge driver): {files} differ from what the driver gives from its parents")
        refused = hand.refusals
        if refused:
            why = "; ".join(f"{rel}: {reason}" for rel, reason in sorted(refused.items()))
            fix = f"none: doctor cannot re-merge it ({why}); nothing is changed"
            repair = None
        else:
            fix = (f"re-merge its store files with the statedir merge driver from its parents, as one new commit "
                   f"({TRAILER}: {hand.sha[:10]}); history is not rewritten")
            repair = _repairer(store, hand.sha, actor, timeout)
        out.append({"kind": "hand_merge", "file": sorted(hand.fixed)[0], "message": message, "fix": fix,
                    "_repair": repair, "commit": hand.sha})
    return out


def _repairer(store: Store, sha: str, actor: str, timeout: float | None) -> Any:
    def repair() -> None:
        with store.locked(timeout):
            head = git.head(store.worktree) or ""
            with objects.ObjectReader(store.worktree) as objs:
                hand = examine(CommitReader(store, objs), sha, _parents(store, sha), head)
            if hand is None:
                return
            if hand.refusals:  # changed under doctor's feet: stays a finding
                return
            writes = {rel: data for rel, data in hand.fixed.items() if isinstance(data, bytes)}
            removes = [rel for rel, data in hand.fixed.items() if data is None]
            message = commit_message.message(
                f"doctor: re-merge the hand-resolved merge {sha[:10]} with the statedir merge driver", "-", actor,
                "doctor", trailers={TRAILER: sha},
                reason=f"Files re-merged from the merge's parents: {', '.join(sorted(hand.fixed))}")
            persist(store, writes=writes, removes=removes, message=message, author=actor)
    return repair


def expected(reader: CommitReader, commit: Commit) -> dict[str, bytes | None]:
    """verify's replay of a repair commit: the files the merge it names must be repaired to,
    on the repair's parent (refused where that merge is no ancestor, or needs no repair)."""
    sha = commit.repairs or ""
    store = reader.store
    if not _SHA.match(sha) or commit.parent is None:
        raise ValidationFailed(f"the repair names {sha[:40]!r}, which is not a commit")
    if git.run(store.worktree, "merge-base", "--is-ancestor", sha, commit.parent, check=False).returncode != 0:
        raise ValidationFailed(f"the repair names {sha[:10]}, which is not in its history")
    parents = _parents(store, sha)
    if len(parents) != 2:
        raise ValidationFailed(f"the repair names {sha[:10]}, which is not a merge of two parents")
    hand = examine(reader, sha, parents, commit.parent)
    if hand is None:
        raise ValidationFailed(f"the repair names merge {sha[:10]}, which the statedir merge driver made")
    if hand.refusals:
        raise ValidationFailed(f"merge {sha[:10]} cannot be repaired by a re-merge: "
                               + "; ".join(f"{rel}: {why}" for rel, why in sorted(hand.refusals.items())))
    return {rel: data for rel, data in hand.fixed.items() if not isinstance(data, str)}


def set_apart(history: Iterable[Commit], findings: list[dict[str, Any]]) -> tuple[list[dict[str, Any]],
                                                                                list[dict[str, Any]]]:
    """(findings, repaired): a hand merge's `illegal_merge` findings move to `repaired` (with the
    repair's sha) where a later repair commit in `history` names it and replays clean."""
    flawed = {f["commit"] for f in findings}
    repairs = {c.repairs: c.sha for c in history if c.repairs and c.sha not in flawed}
    kept, repaired = [], []
    for f in findings:
        if f["kind"] == "illegal_merge" and f["commit"] in repairs and f["file"] is not None:
            repaired.append({**f, "repaired_by": repairs[f["commit"]]})
        else:
            kept.append(f)
    return kept, repaired

"""verify: walk every commit that touched the store (or one run) and prove each came from a
legal statedir transition, reading history with two git processes in all: one `git log` (with
raw diffs; a run's changes are read from its own trees instead, statedir.history.commit_log),
one `git cat-file --batch` for the trees and blobs replay needs (and, where signers.yaml binds
actors to keys, one `git log` of its changes and one ssh-keygen per commit whose signature it
asks for)."""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from statedir.errors import StatedirError
from statedir.gitops import git, objects
from statedir.gitops.object_ids import blob_id
from statedir.history import (
    ack_trust,
    acknowledgements,
    merge_check,
    merge_repair,
    people_check,
    template_check,
    verified_cache,
)
from statedir.history.commit_log import commits
from statedir.history.replay import expected, refusal
from statedir.history.signatures import Auditor
from statedir.history.snapshot import CommitReader
from statedir.history.stored_files import parse
from statedir.store import layout, steering
from statedir.store.recorded import Commit
from statedir.store.store import Store

_LOG = re.compile(r"^runs/[^/]+/history/")
_PASSPORT = re.compile(r"^runs/[^/]+/materials/[^/]+\.yaml$")
_OWN_STEERING = {"init": tuple(steering.INIT_TEXTS), "doctor": (".gitattributes",)}  # action -> what it writes


def verify(store: Store, run_id: str | None = None, since: str | None = None, *,
           taken: bool = False, newest: int | None = None) -> dict[str, Any]:
    """{clean, checked, findings: [{commit, kind, file, message}], repaired, acknowledged}: hand_edit,
    illegal, log_rewritten, label_reused, signature, illegal_merge (statedir.history.merge_check), in
    history order. A hand merge a later doctor repair commit re-merged is listed in `repaired` (each
    with `repaired_by`; statedir.history.merge_repair), a finding acknowledged.yaml names (as of HEAD)
    in `acknowledged`, not in `findings`, where the acknowledgement counts here (made on this clone, or
    signed by an acknowledger: statedir.history.ack_trust); one that does not is listed in
    `not_counted` with the reason, its finding left standing; each key only where it has an entry.
    With `taken` (a sync's check of what it took onto `since`), the commits after `since` are held
    to the signers trusted at `since` too (statedir.history.entry). With `run_id` and `newest`
    (no `since`), only the run's newest that many commits, as `log RUN` lists them, are replayed:
    read from the run's remembered listing (statedir.history.path_index), not by a walk."""
    rel = store.run_dir(run_id) if run_id else "."
    since_sha = objects.resolve(store.worktree, since) if since else None
    whole = run_id is None and since is None and not taken
    head = git.head(store.worktree) if whole else None
    earlier = verified_cache.start(store) if whole else None  # verified up to a commit: only what came after
    if earlier:
        since_sha = earlier.commit
    found: list[Any] = []  # the findings of the commits checked, and signature checks running (Futures)
    removed = dict(earlier.removed) if earlier else {}  # passport path -> the blob it held before its deletion
    with objects.ObjectReader(store.worktree) as objs, Auditor(store, objs) as signatures:
        reader = CommitReader(store, objs)
        history = commits(store, store.git_path(rel), since_sha, reader=reader,
                          newest=newest if run_id and not since_sha else None)
        templates = template_check.Identities(store, since_sha, earlier.templates if earlier else None)
        for commit in history:
            if len(commit.parents) > 1:  # a merge (by sync or a plain git pull): the merge driver's result
                found += _merge(reader, commit, templates.known)
            else:  # replayed on the state the hand merges before it should have left
                forged = reader.hand_merges.at(commit.parent)
                reader.viewing = (commit.parent, forged) if commit.parent and forged else None
                found += template_check.combined(_check(reader, commit, removed), templates.check(reader, commit))
                reader.viewing = None
                if commit.repairs:
                    reader.hand_merges.repair(store.worktree, commit.repairs, commit.sha)
            found += signatures.check(commit)
        if taken and since_sha and history:
            found += signatures.entry.taken([c.sha for c in history if len(c.parents) == 1], since_sha,
                                            objects.resolve(store.worktree, "HEAD"))
        findings, repaired = merge_repair.set_apart(history, signatures.resolved(found))
        findings, acknowledged, not_counted = ack_trust.standing(
            reader, signatures, findings, lambda: commits(store, store.git_path(acknowledgements.FILE), None))
    if earlier:  # remembered only where none was repaired, acknowledged or left uncounted (verified_cache), and
        findings = earlier.findings + findings  # signers.yaml and acknowledged.yaml are as they were: they stand
    result: dict[str, Any] = {"clean": not findings, "checked": len(history) + (earlier.checked if earlier else 0),
                              "findings": findings}
    if repaired:
        result["repaired"] = repaired
    if acknowledged:  # the contract's three keys, and these only where they have an entry
        result["acknowledged"] = acknowledged
    if not_counted:
        result["not_counted"] = not_counted
    if head:
        verified_cache.remember(store, head, result, any(len(c.parents) > 1 or c.repairs for c in history),
                                earlier, templates.stored(), removed)
    return result


def _merge(reader: CommitReader, commit: Commit, seen: Any) -> list[dict[str, Any]]:
    """A merge's findings; a hand merge is remembered with what the driver gives instead."""
    wrong = merge_check.wrong(reader, commit.sha, commit.parents)
    rels = sorted(rel for rel, want in wrong.items() if not isinstance(want, bool))
    held = reader.objects.read_many([reader.spec(commit.sha, rel) for rel in rels]) if rels else []
    reader.hand_merges.met(reader.store.worktree, commit.sha, {
        rel: (found[2] if found and found[1] == "blob" else None, wrong[rel])  # type: ignore[misc]
        for rel, found in zip(rels, held, strict=True)}, seen)
    return merge_check.check(reader, commit.sha, commit.parents, wrong)


def _finding(commit: Commit, kind: str, file: str | None, message: str) -> dict[str, Any]:
    return {"commit": commit.sha, "kind": kind, "file": file, "message": message}


def _check(reader: CommitReader, commit: Commit, removed: dict[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    replayed: set[str] = set()  # files the replay proved exactly right
    statedirs = bool(commit.run_id and commit.actor and commit.action)
    # Files that steer git or hooks: illegal whoever changed them, but where statedir's own init or
    # doctor wrote them (their replay then holds the text to statedir's, byte for byte).
    steered = {rel: why for rel in commit.changed if (why := steering.steers(rel))
               and not (statedirs and rel in _OWN_STEERING.get(commit.action, ()))}
    foreign = {rel: why for rel, (status, _, _) in commit.changed.items() if status != "D" and rel not in steered
               and (why := layout.unwritten(rel, commit.modes.get(rel, "100644")))}
    if steered or foreign:  # reported once, as what they are; the rest of the commit is checked as usual
        for rel in sorted({*steered, *foreign}):
            own = rel in steering.INIT_TEXTS and rel in steered
            out.append(_finding(commit, "illegal" if statedirs or rel in steered else "hand_edit", rel,
                                f"{_verb(commit.changed[rel][0])} {rel}, "
                                + ("which only statedir's own init writes" if own else "a file statedir never writes")
                                + f": {steered.get(rel) or foreign[rel]}"))
        commit = dataclasses.replace(commit, changed={k: v for k, v in commit.changed.items()
                                                      if k not in foreign and k not in steered})
        if not commit.changed:
            return out
    wrong = people_check.changed(reader, commit, statedirs)  # who may act: never by hand
    if wrong:
        out.append(_finding(commit, "illegal", layout.CONFIG, wrong))
        commit = dataclasses.replace(commit, changed={k: v for k, v in commit.changed.items() if k != layout.CONFIG})
        if not commit.changed:
            return out
    if statedirs and (named := people_check.person(reader, commit)):
        out.append(_finding(commit, "illegal", None, named))
    if not statedirs:
        out += [_finding(commit, "hand_edit", rel, f"{_verb(status)} without statedir (no Statedir-* trailers)")
                for rel, (status, _, _) in sorted(commit.changed.items())]
    else:
        out += _replay(reader, commit, replayed)
    for rel, (status, old, new) in sorted(commit.changed.items()):
        if _LOG.match(rel) and status != "A" and rel not in replayed:
            out += _append_only(reader, commit, rel, old, new if status != "D" else None)
        if _PASSPORT.match(rel):
            out += _label(reader, commit, rel, status, old, new, removed)
    return out


def _verb(status: str) -> str:
    return {"A": "added", "D": "deleted"}.get(status, "changed")


def _replay(reader: CommitReader, commit: Commit, replayed: set[str]) -> list[dict[str, Any]]:
    try:
        want = expected(reader, commit)
    except StatedirError as exc:
        named = exc.details.get("file")
        first = named if named in commit.changed else min(commit.changed, default=None)
        return [_finding(commit, "illegal", first, f"replaying {commit.action} on the parent is refused: "
                                                   f"{refusal(exc)}")]
    out = []
    width = len(commit.sha)
    parent_files: dict[str, str] | None = None
    for rel in sorted(set(want) | set(commit.changed)):
        if rel not in want:  # a hand edit that rode into the transition's commit
            out.append(_finding(commit, "hand_edit", rel, f"{_verb(commit.changed[rel][0])} in the commit of a "
                                                          f"{commit.action} transition, which does not write it"))
            continue
        if rel in commit.changed:  # as it reads on the state the hand merges before it should have left
            actual = reader.viewed(rel, commit.changed[rel][2]) or "0" * width
        elif not rel.startswith(f"runs/{commit.run_id}/"):  # the bus's, the ledger's: as the parent held it
            actual = (reader.blob_id(commit.parent, rel) if commit.parent else None) or "0" * width
        else:
            if parent_files is None:
                parent_files = reader.files(commit.parent, f"runs/{commit.run_id}") if commit.parent else {}
            actual = parent_files.get(rel, "0" * width)
        wanted = want[rel]
        if (set(actual) == {"0"} if wanted is None else blob_id(wanted, width) == actual):
            replayed.add(rel)
            if rel in reader.rendered:  # the next commit's replay reads it without parsing it again
                reader.adopt(rel, actual, reader.rendered[rel])
        elif wanted is not None and rel.startswith(".schemas/") and _a_schema(reader, actual):
            replayed.add(rel)  # a copy an older statedir compiled
        elif wanted is not None and _same_data(reader, rel, wanted, actual):
            out.append(_finding(commit, "hand_edit", rel, f"the {commit.action} transition's data, but text edited "
                                                          "by hand (comments or layout) rode into its commit"))
        else:
            out.append(_finding(commit, "illegal", rel, f"replaying {commit.action} on the parent gives "
                                                        "different content (forged or edited)"))
    return out


def _a_schema(reader: CommitReader, actual: str) -> bool:
    """Whether a committed file is a JSON Schema document. `.schemas/` holds copies for editors,
    derived from statedir's schemas and the template, which no check of statedir's reads (it
    compiles its own): a copy an older statedir compiled differs from today's compile without
    being a forgery, so a transition's copy need only be a schema, at a path it writes."""
    if set(actual) == {"0"}:
        return False
    try:
        doc = json.loads(reader.raw(actual))
    except ValueError:
        return False
    return isinstance(doc, dict) and isinstance(doc.get("$schema"), str)


def _same_data(reader: CommitReader, rel: str, want: bytes, actual: str) -> bool:
    """Whether the committed blob holds the data the replay wrote, in other text."""
    if set(actual) == {"0"}:
        return False
    try:
        return bool(parse(rel, want)[0] == parse(rel, reader.raw(actual))[0])
    except StatedirError:
        return False


def _append_only(reader: CommitReader, commit: Commit, rel: str, old: str, new: str | None) -> list[dict[str, Any]]:
    before = reader.raw(old)
    after = reader.raw(new) if new else b""
    if after.startswith(before):
        return []
    if new is None:
        return [_finding(commit, "log_rewritten", rel, "the append-only log was deleted")]
    try:
        old_entries, new_entries = parse(rel, before)[0], parse(rel, after)[0]
    except StatedirError:
        return [_finding(commit, "log_rewritten", rel, "committed text of the append-only log was changed")]
    index = next((i for i, (a, b) in enumerate(zip(old_entries, new_entries, strict=False)) if a != b), None)
    if index is not None:
        message = f"entry {index} was changed or reordered"
    elif len(new_entries) < len(old_entries):
        message = f"{len(old_entries) - len(new_entries)} entries were removed from the end"
    else:
        message = "committed text of the append-only log was changed"
    return [_finding(commit, "log_rewritten", rel, message)]


def _identity(reader: CommitReader, rel: str, oid: str) -> Any:
    try:
        passport = reader.plain(rel, oid)
    except StatedirError:
        return ("unreadable", oid)
    return {k: passport.get(k) for k in ("series", "materials", "content_hash", "files")}


def _label(reader: CommitReader, commit: Commit, rel: str, status: str, old: str, new: str,
           removed: dict[str, str]) -> list[dict[str, Any]]:
    """label_reused where a passport's label names other content than it did, changed in place or
    added again after its deletion (in an earlier commit, maybe one a remembered verify checked)."""
    label = rel.rpartition("/")[2][:-5]
    if status == "D":
        removed[rel] = old  # its blob, not what it held: the verify cache keeps this map as it is
        return []
    held = old if status != "A" else removed.pop(rel, None)
    if held is None or _identity(reader, rel, held) == _identity(reader, rel, new):
        return []
    return [_finding(commit, "label_reused", rel, f"version label {label} now names different content "
                                                  "(a label is never reused)")]


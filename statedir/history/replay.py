"""Replaying one recorded transition: decide the recorded request again, with the same pure
rules, on the parent commit's files, and render the files that decision writes
(statedir.history.replay_files; a `new`, statedir.history.replay_new).

`expected()` returns store-relative path -> the exact bytes the transition must have left
there; verify compares them with the commit's own blobs (by object id, without reading them).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from statedir.bus import replay as bus
from statedir.engine import attribution, people
from statedir.engine.rules import decision
from statedir.errors import IllegalTransition, StatedirError, ValidationFailed
from statedir.files import schema
from statedir.history import acknowledgements, merge_repair, migrate, replay_new, rollback
from statedir.history.replay_files import render, request, run_files
from statedir.history.snapshot import CommitReader
from statedir.research import replay as research
from statedir.signing import manage
from statedir.store import layout, steering
from statedir.store.recorded import Commit


def expected(reader: CommitReader, commit: Commit) -> Mapping[str, bytes | None]:
    """The bytes every file the transition writes must hold after it (None: removed); raises the refusal
    (a StatedirError) where the rules refuse the recorded request on the parent's state."""
    replay = REPLAYERS.get(commit.action) or (bus.replay if commit.action.startswith("bus-") else None)
    if replay is None:
        raise ValidationFailed(f"statedir has no replay for action {commit.action!r}")
    reader.rendered.clear()
    return replay(reader, commit)


def _transition(reader: CommitReader, commit: Commit) -> dict[str, bytes]:
    req, now = request(commit)
    files = run_files(reader, commit)
    t, run = reader.run(commit.parent or "", commit.run_id, files,
                        boundary_log=req.action == "resume" or bool(req.args.get("reset_boundaries")))
    attribution.check(t, req)  # who it names, as the write path holds it (a forged answer is refused)
    if req.action == "rollback":
        target = rollback.target_at(reader, commit.run_id, str(req.args.get("to")), commit.parent)
        change = rollback.decide(t, run, target, req, now)
    else:
        decided = decision.decide(t, run, req, now)
        if decided is None or decided.noop:  # a request that changes nothing makes no commit
            raise IllegalTransition(f"{req.action} changes nothing on the parent's state")
        change = decided
    return render(reader, commit, files, change, req, now, t)


def _init(reader: CommitReader, commit: Commit) -> dict[str, bytes]:
    """`init`: the store's own files, made once, in a commit whose parent has no store."""
    if commit.parent and reader.objects.read(reader.spec(commit.parent, layout.CONFIG)):
        raise ValidationFailed("init of a store that already existed")
    allowed = {layout.CONFIG, *steering.INIT_TEXTS}
    odd = [rel for rel in commit.changed if rel not in allowed and not rel.startswith(".schemas/")]
    if odd or any(status != "A" for status, _, _ in commit.changed.values()):
        raise ValidationFailed(f"init wrote {', '.join(odd) or 'over existing files'}")
    out = {rel: reader.raw(new) for rel, (_, _, new) in commit.changed.items()}
    for rel in sorted(steering.INIT_TEXTS.keys() & out.keys()):  # what git and hooks obey: statedir's text only
        if not steering.init_wrote(rel, out[rel]):
            raise ValidationFailed(f"init wrote {rel} with a text statedir's init never writes "
                                   f"({steering.steers(rel)})", file=rel)
    return out


def _doctor(reader: CommitReader, commit: Commit) -> dict[str, bytes | None]:
    """`doctor --fix`: `.schemas/` copies, each exactly the schema statedir ships; the store's
    `.gitattributes` exactly as statedir writes it (naming the merge driver); logs moved into
    day segments with every entry kept (None: a legacy file it removed); or a hand-resolved
    merge's store files merged again by the driver (statedir.history.merge_repair)."""
    if commit.repairs:  # a hand-resolved merge's files merged again by the driver
        return merge_repair.expected(reader, commit)
    out = migrate.check(reader, commit)
    for rel in commit.changed:
        if rel in out:
            continue
        if rel == ".gitattributes":
            out[rel] = layout.GITATTRIBUTES.encode()
            continue
        name = rel.removeprefix(".schemas/").removesuffix(".schema.json")
        if not rel.startswith(".schemas/") or name not in schema.schema_names():
            raise ValidationFailed(f"doctor wrote {rel}, which is not a schema copy")
        out[rel] = schema.schema_path(name).read_bytes()
    return out


# action -> replay (and `bus-*`, the bus's): any other action is not a statedir transition. Besides the run's
# transitions, each is its owner's: `signers add|remove` the recorded change applied to the parent's signers.yaml,
# `people add|remove` to its statedir.yaml (by the user), `verify --acknowledge` the findings appended to its
# acknowledged.yaml, a research-ledger write each record held to the ledger's rules, `bus-<verb>` decided again
# with the bus's own rules (a verb it lacks is refused there).
REPLAYERS: dict[str, Callable[[CommitReader, Commit], Mapping[str, bytes | None]]] = {
    **{action: _transition for action in decision.HANDLERS}, "rollback": _transition, "new": replay_new.new,
    "init": _init, "doctor": _doctor, "signers": manage.replay, "people": people.replay,
    "research": research.replay, "acknowledge": acknowledgements.replay,
}


def refusal(exc: StatedirError) -> str:
    return f"{exc.message} [{exc.code}]"

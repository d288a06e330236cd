"""Replaying one recorded transition: decide the recorded request again, with the same pure
rules, on the parent commit's files, and render the files that decision writes.

`expected()` returns store-relative path -> the exact bytes the transition must have left
there; verify compares them with the commit's own blobs (by object id, without reading them).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from statedir.engine import attribution, run_shape, runs
from statedir.engine.rules import decision
from statedir.engine.transaction import LOGS, planned, scope_of
from statedir.engine.transition_data import Change, Request, require_permission
from statedir.errors import IllegalTransition, RunExists, StatedirError, ValidationFailed
from statedir.files import schema, yaml
from statedir.gitops import request_ids
from statedir.gitops.object_ids import blob_id
from statedir.history import rollback
from statedir.history.snapshot import Reader
from statedir.store import layout, run_logs, steering
from statedir.store.recorded import Commit


def _run_files(reader: Reader, commit: Commit) -> dict[str, str]:
    return reader.files(commit.parent, f"runs/{commit.run_id}") if commit.parent else {}


def expected(reader: Reader, commit: Commit) -> Mapping[str, bytes | None]:
    """The bytes every file the transition writes must hold after it (None: removed); raises the refusal
    (a StatedirError) where the rules refuse the recorded request on the parent's state."""
    replay = REPLAYERS.get(commit.action) or (_bus if commit.action.startswith("bus-") else None)
    if replay is None:
        raise ValidationFailed(f"statedir has no replay for action {commit.action!r}")
    reader.rendered.clear()
    return replay(reader, commit)


def _request(commit: Commit) -> tuple[Request, str]:
    if commit.request is None:
        raise ValidationFailed("the commit records no request (Statedir-Request), so it cannot be decided again")
    args = commit.request.get("args")
    at = commit.request.get("at")
    if not isinstance(args, dict) or not isinstance(at, str):
        raise ValidationFailed("the recorded request has no args or time")
    request_id = commit.request.get("request_id")  # absent in commits made before request ids
    if request_id is not None and not (isinstance(request_id, str) and request_ids.ID_RE.match(request_id)):
        raise ValidationFailed(f"the recorded request id {str(request_id)[:40]!r} is not a request id")
    return Request(commit.action, commit.actor, args, commit.request.get("reason"), request_id, commit.who), at


def _transition(reader: Reader, commit: Commit) -> dict[str, bytes]:
    req, now = _request(commit)
    files = _run_files(reader, commit)
    t, run = reader.run(commit.parent or "", commit.run_id, files,
                        ledger=req.action == "resume" or bool(req.args.get("reset_boundaries")))
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


def _new(reader: Reader, commit: Commit) -> dict[str, bytes]:
    req, now = _request(commit)
    files = _run_files(reader, commit)
    base = f"runs/{commit.run_id}"
    if f"{base}/state.yaml" in files:
        raise RunExists(f"run {commit.run_id!r} already existed", run_id=commit.run_id)
    name = str(req.args.get("template"))
    # As `new` took it: the file the commit stores, else by name on the parent (a recorded digest chooses nothing)
    stores = f"templates/{name}.yaml" in commit.changed or not commit.parent
    t = _by_name(reader, commit.sha if stores else commit.parent or "", name)
    reader.made_with[commit.run_id] = t.digest  # its later transitions replay on this content
    made = _recorded(reader, commit, f"{base}/state.yaml")
    made_on = _made_on(reader, commit, base)
    if "template_digest" not in made and made_on is not None and str(t.doc.get("version")) != made_on:
        t = reader.template(commit.sha, name, made_on)  # a run from before digests: the version it names
        reader.made_with[commit.run_id] = t.digest
    extra = _templates(reader, commit, t)
    attribution.check(t, req)
    recorded = "template_digest" in made  # not in a run made before runs recorded it
    if recorded and made["template_digest"] != t.digest:
        t = _shipped_then(reader, commit, t, made_on, made["template_digest"])
        reader.made_with[commit.run_id] = t.digest
    if recorded and made["template_digest"] != t.digest:
        raise ValidationFailed(f"the run records template {name!r} version {made.get('template_version')} "
                               f"({made['template_digest']}), but `new` takes {name!r} version "
                               f"{t.doc.get('version')} ({t.digest}) on the parent", file=f"{base}/state.yaml")
    require_permission(t, req.actor, "new")
    _, change = runs.new_run(t, commit.run_id, req.args.get("topic"), req.args.get("language") or "en",
                             req.args.get("entry_point"), now, passport=req.args.get("passport"),
                             confirm_skip=bool(req.args.get("confirm_skip")), file=req.args.get("file"),
                             brought=req.args.get("entry_materials"),
                             settings=req.args.get("settings"))
    if not recorded:
        del change.state["template_digest"]
    for log in LOGS:  # statedir before log segments wrote every log, empty, at `new`
        rel = run_logs.legacy(base, log)
        if log != "transitions" and rel in commit.changed and commit.changed[rel][0] == "A":
            extra[rel] = yaml.header(layout.schema_ref(rel, scope_of(t))).encode()
    return {**render(reader, commit, files, change, req, now, t), **extra}


def _shipped_then(reader: Reader, commit: Commit, t: Any, made_on: str | None, digest: str) -> Any:
    """A run made before this statedir shipped a newer version of its template: the older version
    statedir ships beside the newer one (academic-pipeline@3.22.yaml), where the run's digest is
    that file's and no run on the parent was made on the newer one (a statedir that took the newer
    version never takes an older again). Else `t`, which the digest check then refuses."""
    from statedir.engine import template as template_mod

    older = template_mod.shipped_version(t.name, made_on) if made_on and template_mod.shipped().get(t.name) else None
    if older is None or older.digest != digest or commit.parent is None:
        return t
    newest = str(t.doc.get("version"))
    runs = [name for name, (mode, _) in reader.objects.tree(reader.spec(commit.parent, "runs")).items()
            if mode.startswith("4")]
    specs = [reader.spec(commit.parent, f"runs/{r}/state.yaml") for r in runs]
    for at in range(0, len(specs), 64):  # a few names a round trip: they must fit git's pipe
        for found in reader.objects.read_many(specs[at:at + 64]):
            try:
                state = yaml.to_plain(yaml.load(found[2])) if found and found[1] == "blob" else None
            except StatedirError:
                continue  # a state.yaml no run reads is another finding's business
            if isinstance(state, dict) and state.get("template") == t.name and \
                    str(state.get("template_version")) == newest:
                return t
    return older


def _by_name(reader: Reader, commit: str, name: str) -> Any:
    """What `new --template NAME` takes at `commit` (statedir.engine.template.load): the store's
    copy, unless statedir ships that name and version with other content."""
    from statedir.engine import template as template_mod

    t = reader.template(commit, name)
    ships = template_mod.shipped().get(name)
    if ships is not None and t.source.startswith("templates/"):
        own = template_mod.load(str(ships))
        if own.doc.get("version") == t.doc.get("version") and own.digest != t.digest:
            return own
    return t


def _recorded(reader: Reader, commit: Commit, rel: str) -> dict[str, Any]:
    """The data the commit wrote to `rel` ({} where it wrote none, or no mapping)."""
    if rel not in commit.changed or commit.changed[rel][0] == "D":
        return {}
    found = reader.plain(rel, commit.changed[rel][2])
    return found if isinstance(found, dict) else {}


def _made_on(reader: Reader, commit: Commit, base: str) -> str | None:
    """The template version the run's new state.yaml names (None: none readable); the replay holds
    its files to that version's rules, so naming another version than the one used fails there."""
    changed = commit.changed.get(f"{base}/state.yaml")
    if changed is None:
        return None
    try:
        state = reader.plain(f"{base}/state.yaml", changed[2])
    except StatedirError:
        return None
    version = state.get("template_version") if isinstance(state, dict) else None
    return str(version) if version is not None else None


def _templates(reader: Reader, commit: Commit, t: Any) -> dict[str, bytes]:
    """The template files `new --template FILE` writes, by `versions.stored_files` on the
    parent's: the file as the newest `templates/<name>.yaml`, a different version it replaces
    kept beside it, never a version's content changed. A `new` touching no template writes none."""
    from statedir.engine.template import versions as template_versions

    stored = f"templates/{t.name}.yaml"
    if not any(rel.startswith("templates/") for rel in commit.changed):
        return {}
    if stored not in commit.changed or commit.changed[stored][0] == "D":
        raise ValidationFailed(f"a `new` on template {t.name!r} that writes other templates than {stored}")
    try:
        text = reader.raw(commit.changed[stored][2]).decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationFailed(f"{stored} is not UTF-8 text") from None

    def held(rel: str) -> bytes | None:
        return reader.blob(commit.parent, rel) if commit.parent else None

    try:
        return {rel: data.encode() for rel, data in template_versions.stored_files(held, t, text).items()}
    except StatedirError as exc:
        exc.details.setdefault("file", stored)
        raise


def _compiled(t: Any, commit: Commit) -> dict[str, bytes]:
    """The template's compiled schemas a transition's commit wrote (derived data: they must be
    exactly what the template compiles to)."""
    from statedir.engine.template import compiled as compile_mod

    return {rel: text.encode() for rel, text in compile_mod.schema_files(t).items()
            if rel in commit.changed}


def render(reader: Reader, commit: Commit, files: dict[str, str], change: Change, req: Request,
           now: str, t: Any = None) -> dict[str, bytes]:
    """What `transaction.apply` writes for `change`, byte for byte, on the parent's files."""
    scope = scope_of(t) if t is not None else None
    base = f"runs/{commit.run_id}"
    data, appends = planned(base, change, req, now, t.logs if t is not None else LOGS, t, files)
    older = run_shape.older_files(t, base, change.state, change.stages, lambda rel: reader.plain(rel, files[rel])
                                  if rel in files else None) if t is not None else {}
    out: dict[str, bytes] = {}

    def text(rel: str, value: Any) -> tuple[bytes, bool]:
        if rel in files and not reader.parsed(rel, files[rel])[1]:  # hand comments: merged, as apply does
            return yaml.dump(yaml.merge(yaml.load(reader.raw(files[rel]), rel), value),
                             layout.schema_ref(rel, scope)).encode(), False
        return yaml.dump(value, layout.schema_ref(rel, scope)).encode(), True

    for rel in [*data, *(r for r in older if r not in data)]:
        made = commit.changed.get(rel)
        if rel in older and made is not None:  # a commit of statedir before the written shape: its files
            found, plain = text(rel, older[rel])
            if blob_id(found, len(commit.sha)) == made[2]:
                out[rel] = found
                if plain:
                    reader.rendered[rel] = older[rel]
                continue
        if rel in data:
            out[rel], plain = text(rel, data[rel])
            if plain:
                reader.rendered[rel] = data[rel]
    entries = []
    for rel, value in appends:
        owner = run_logs.log_of(rel)
        if owner and run_logs.legacy(*owner) in commit.changed:  # made by statedir before log segments
            rel = run_logs.legacy(*owner)
        entries.append((rel, yaml.dump_entry(value), yaml.header(layout.schema_ref(rel, scope))))
    dated = run_logs.place([e for e in entries if run_logs.SEGMENT_RE.match(e[0])],  # a full day rolls over,
                           lambda rel: len(reader.raw(files[rel])) if rel in files else None)  # as in apply
    for rel, text, header in [e for e in entries if not run_logs.SEGMENT_RE.match(e[0])] + dated:
        before = out.get(rel)
        if before is None:
            before = reader.raw(files[rel]) if rel in files else b""
        out[rel] = before + (header + text if not before else text).encode()
    if t is not None:
        out.update(_compiled(t, commit))
    return out


def _init(reader: Reader, commit: Commit) -> dict[str, bytes]:
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


def _doctor(reader: Reader, commit: Commit) -> dict[str, bytes | None]:
    """`doctor --fix`: `.schemas/` copies, each exactly the schema statedir ships; the store's
    `.gitattributes` exactly as statedir writes it (naming the merge driver); logs moved into
    day segments with every entry kept (None: a legacy file it removed); or a hand-resolved
    merge's store files merged again by the driver (statedir.history.merge_repair)."""
    from statedir.history import merge_repair, migrate

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


def _signers(reader: Reader, commit: Commit) -> dict[str, bytes]:
    """`signers add|remove`: the recorded change applied to the parent's signers.yaml."""
    from statedir.signing import manage

    return manage.replay(reader, commit)


def _people(reader: Reader, commit: Commit) -> dict[str, bytes]:
    """`people add|remove`: the recorded change, by the user, applied to the parent's statedir.yaml."""
    from statedir.engine import people

    return people.replay(reader, commit)


def _acknowledge(reader: Reader, commit: Commit) -> dict[str, bytes]:
    """`verify --acknowledge`: the recorded findings appended to the parent's acknowledged.yaml."""
    from statedir.history import acknowledgements

    return acknowledgements.replay(reader, commit)


def _bus(reader: Reader, commit: Commit) -> Mapping[str, bytes | None]:
    """`bus-<verb>`: decided again with the bus's own rules (a verb it lacks is refused there)."""
    from statedir.bus import replay as bus

    return bus.replay(reader, commit)


def _research(reader: Reader, commit: Commit) -> Mapping[str, bytes | None]:
    """A research-ledger write: each record held to the ledger's own rules."""
    from statedir.research import replay as research

    return research.replay(reader, commit)


# action -> replay (and `bus-*`, the bus's): any other action is not a statedir transition.
REPLAYERS: dict[str, Callable[[Reader, Commit], Mapping[str, bytes | None]]] = {
    **{action: _transition for action in decision.HANDLERS}, "rollback": _transition, "new": _new,
    "init": _init, "doctor": _doctor, "signers": _signers, "people": _people, "research": _research,
    "acknowledge": _acknowledge,
}


def refusal(exc: StatedirError) -> str:
    return f"{exc.message} [{exc.code}]"

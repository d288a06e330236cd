"""`new` replayed: the template the recorded `new` took as it took it (the store's copy, the one
statedir ships under that name and version, or the older version statedir ships beside a newer
one), the template files it stored, and the run it made decided again (statedir.engine.runs)."""
from __future__ import annotations

from typing import Any

from statedir.engine import attribution, runs
from statedir.engine import template as template_mod
from statedir.engine.template import versions as template_versions
from statedir.engine.transaction import LOGS, scope_of
from statedir.engine.transition_data import require_permission
from statedir.errors import RunExists, StatedirError, ValidationFailed
from statedir.files import yaml
from statedir.history.replay_files import render, request, run_files
from statedir.history.snapshot import CommitReader
from statedir.store import layout, run_logs
from statedir.store.recorded import Commit


def new(reader: CommitReader, commit: Commit) -> dict[str, bytes]:
    """What the recorded `new` writes: the run made again on the template it took, and the template
    files it stored."""
    req, now = request(commit)
    files = run_files(reader, commit)
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


def _shipped_then(reader: CommitReader, commit: Commit, t: Any, made_on: str | None, digest: str) -> Any:
    """A run made before this statedir shipped a newer version of its template: the older version
    statedir ships beside the newer one (academic-pipeline@3.22.yaml), where the run's digest is
    that file's and no run on the parent was made on a newer one (a statedir that took a newer
    version never takes an older again). Else `t`, which the digest check then refuses."""
    older = template_mod.shipped_version(t.name, made_on) if made_on and template_mod.shipped().get(t.name) else None
    if older is None or older.digest != digest or commit.parent is None:
        return t
    newer = {str(t.doc.get("version")), *(version for version in _kept_versions(t.name)
                                           if _order(version) > _order(made_on))}
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
                    str(state.get("template_version")) in newer:
                return t
    return older


def _kept_versions(name: str) -> list[str]:
    """The older versions of template `name` statedir ships beside its newest."""
    return [p.stem.partition("@")[2] for p in template_mod.shipped_files() if p.stem.startswith(f"{name}@")]


def _order(version: str) -> tuple[int, ...]:
    """A dotted version as numbers ('3.22' < '3.23'); a part that is no number counts 0."""
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def _by_name(reader: CommitReader, commit: str, name: str) -> Any:
    """What `new --template NAME` takes at `commit` (statedir.engine.template.load): the store's
    copy, unless statedir ships that name and version with other content."""
    t = reader.template(commit, name)
    ships = template_mod.shipped().get(name)
    if ships is not None and t.source.startswith("templates/"):
        own = template_mod.load(str(ships))
        if own.doc.get("version") == t.doc.get("version") and own.digest != t.digest:
            return own
    return t


def _recorded(reader: CommitReader, commit: Commit, rel: str) -> dict[str, Any]:
    """The data the commit wrote to `rel` ({} where it wrote none, or no mapping)."""
    if rel not in commit.changed or commit.changed[rel][0] == "D":
        return {}
    found = reader.plain(rel, commit.changed[rel][2])
    return found if isinstance(found, dict) else {}


def _made_on(reader: CommitReader, commit: Commit, base: str) -> str | None:
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


def _templates(reader: CommitReader, commit: Commit, t: Any) -> dict[str, bytes]:
    """The template files `new --template FILE` writes, by `versions.stored_files` on the
    parent's: the file as the newest `templates/<name>.yaml`, a different version it replaces
    kept beside it, never a version's content changed. A `new` touching no template writes none."""
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

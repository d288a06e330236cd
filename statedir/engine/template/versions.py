"""Stored template versions: a user's template is kept in the store at `templates/<name>.yaml`
(the newest); when a newer version replaces it, the older one stays as
`templates/<name>@<version>.yaml`, so every run keeps the version it started with."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.engine import template
from statedir.engine.template import Template
from statedir.engine.template import identity as template_identity
from statedir.engine.template.identity import next_version
from statedir.errors import CorruptStore, InvalidValue, StatedirError
from statedir.files import yaml
from statedir.gitops import git, objects
from statedir.hints import HINT, Hint
from statedir.store import layout
from statedir.store.store import Store


def kept_rel(name: str, version: str) -> str:
    return f"templates/{name}@{version}.yaml"


def run_template(store: Store, state: dict[str, Any]) -> Template:
    """The template a run started with: by the content digest its state records, else (a run
    made before runs recorded one) its kept version, or the newest the store holds or statedir
    ships when that is the same version."""
    name, version = state["template"], state.get("template_version")
    t = _by_version(store, name, version)
    digest = state.get("template_digest")
    if digest is None:  # made before runs recorded it: where two contents claim its version, the one it was made with
        if len({c.digest for c in _candidates(store, name, version)} | {t.digest}) == 1:
            return t
        digest = made_with(store, state.get("run_id") or "", name, version)
        if digest is None:
            return t
    if t.digest == digest:
        return t
    found = next((c for c in _candidates(store, name, version) if c.digest == digest), None)
    found = found or from_history(store, name, str(version), "HEAD", digest)
    if found is None:
        raise CorruptStore(f"run {state.get('run_id')} was made on template {name!r} version {version} with "
                           f"content {digest}, which neither the store, its history nor statedir holds; restore "
                           f"templates/{name}@{version}.yaml from git", template=name, version=version)
    return found


def _by_version(store: Store, name: str, version: str | None) -> Template:
    folder = store.root / "templates"
    if version is not None and (folder / f"{name}@{version}.yaml").is_file():
        return template.load(str(folder / f"{name}@{version}.yaml"), cache_dir=store.cache_dir)
    t = template.load(name, folder, store.cache_dir, allow_path=False)
    if version is not None and t.doc.get("version") != version:
        # The store's copy was edited in place and its version bumped (not through `new --template`,
        # which keeps the old one as name@version.yaml), or statedir ships a newer version than the
        # run was made on (it keeps the older one beside it): else the run's version is in git's history.
        older = template.shipped_version(name, version) or _shipped_newest(name, version) or \
            from_history(store, name, version, "HEAD")
        if older is None:
            raise CorruptStore(f"a run uses template {name!r} version {version}, but the store holds version "
                               f"{t.doc.get('version')} only and its history has no version {version}; restore "
                               f"templates/{name}@{version}.yaml from git", template=name, version=version)
        return older
    return t


def _shipped_newest(name: str, version: str) -> Template | None:
    """The newest template statedir ships under `name`, where it is `version`: a run made on it
    keeps it when the store's own copy (a user's edit, given a version of its own) took the name."""
    ships = template.shipped().get(name)
    if ships is None:
        return None
    newest = template.load(str(ships))
    return newest if str(newest.doc.get("version")) == str(version) else None


def _candidates(store: Store, name: str, version: str | None) -> list[Template]:
    """Every template at hand claiming `name` in `version`: kept, the store's copy, shipped."""
    folder = store.root / "templates"
    found = [template.load(str(p), cache_dir=store.cache_dir)
             for p in (folder / f"{name}@{version}.yaml", folder / f"{name}.yaml") if p.is_file()]
    found = [t for t in found if t.name == name and str(t.doc.get("version")) == str(version)]
    return found + template_identity.shipped_with(name, version)


def made_with(store: Store, run_id: str, name: str, version: str | None) -> str | None:
    """The digest of the template run `run_id` was made with: as the commit that added its
    state.yaml held it (kept, the store's copy, else shipped), or None."""
    try:
        layout.check_run_id(run_id)
        path = store.git_path(f"runs/{run_id}/state.yaml")
        added = git.run(store.worktree, "log", "--format=%H", "--diff-filter=A", "-1", "HEAD", "--",
                        path).stdout.decode().split()
        if not added:
            return None
        with objects.ObjectReader(store.worktree) as objs:
            held = objs.read_many([f"{added[0]}:{store.git_path(rel)}"
                                   for rel in (kept_rel(name, str(version)), f"templates/{name}.yaml")])
        for found in held:
            if found is not None and found[1] == "blob":
                t = template.parse(found[2], f"templates/{name}.yaml")
                if str(t.doc.get("version")) == str(version):
                    return t.digest
    except StatedirError:
        return None
    shipped = template_identity.shipped_with(name, version)
    return shipped[0].digest if shipped else None


def from_history(store: Store, name: str, version: str, rev: str, digest: str | None = None) -> Template | None:
    """Version `version` of the store's template `name` as a commit up to `rev` held it at
    `templates/<name>.yaml` or kept it beside (the newest such commit; with `digest`, the newest
    with that content), or None. Read only where the kept file is missing, so no other command
    pays for it."""
    paths = [store.git_path(f"templates/{name}.yaml"), store.git_path(kept_rel(name, version))]
    try:
        log = git.run(store.worktree, "log", "--format=%H", rev, "--", *paths).stdout.decode().split()
        specs = [f"{sha}:{path}" for sha in log for path in paths]
        with objects.ObjectReader(store.worktree) as objs:
            for start in range(0, len(specs), 50):
                for found in objs.read_many(specs[start:start + 50]):
                    if found is None or found[1] != "blob":
                        continue
                    try:
                        held = template.parse(found[2], f"templates/{name}.yaml@{version}")
                    except StatedirError:
                        continue
                    if str(held.doc.get("version")) == version and digest in (None, held.digest):
                        return held
    except StatedirError:
        return None
    return None


def store_files(store: Store, t: Template, path: Path) -> dict[str, str]:
    """The template files a run on the user's template file `path` adds to the store: the
    newest at `templates/<name>.yaml`, and the version it replaces kept beside it; refused
    where its name and version were ever seen with other content (statedir.engine.template.identity)."""
    kept = template.shipped_version(t.name, str(t.doc.get("version")))
    if kept is not None and kept.digest == t.digest:  # statedir's own older version, kept for its runs
        newest = template.load(t.name)
        raise InvalidValue(f"template {t.name} {t.doc.get('version')} is an older version statedir keeps for the "
                           f"runs made on it; new runs take version {newest.doc.get('version')} (`{HINT}` "
                           "without {opt:template}), or give your copy a `name:` of its own", template=t.name,
                           version=t.doc.get("version"), hint=Hint("new"))
    files = stored_files(store.read_bytes, t, path.read_bytes().decode("utf-8"))
    template_identity.refuse_other_content(store, t)
    return files


def stored_files(read: Callable[[str], bytes | None], t: Template, text: str) -> dict[str, str]:
    """`store_files` on the store's files as `read` reads them (store-relative path -> bytes,
    None where absent) for a template file's `text`; verify's replay of `new` shares it."""
    rel = f"templates/{t.name}.yaml"
    if text.startswith(yaml.HEADER_PREFIX):  # re-point the schema line into the store's .schemas/
        text = text.partition("\n")[2]
    text = yaml.header(layout.schema_ref(rel)) + text
    existing = read(rel)
    if existing is None or existing == text.encode("utf-8"):
        return {rel: text}
    held = template.parse(existing, rel)
    old, new = held.doc.get("version"), t.doc.get("version")
    if old is None:
        raise InvalidValue(f"the store holds a different template named {t.name!r} without a version; save "
                           "your edit under another `name:` (runs on the stored one keep it)", template=t.name)
    if new is None or new == old:
        raise InvalidValue(f"the store already holds template {t.name!r} version {old} with different content; "
                           f"give your edited template a new version (e.g. `version: '{next_version(str(old))}'`) "
                           f"and run `{HINT}` again; runs on version {old} keep theirs",
                           template=t.name, version=old, hint=Hint("new"))
    files = {rel: text}
    kept_new = read(kept_rel(t.name, str(new)))
    if kept_new is not None and kept_new != text.encode("utf-8"):
        raise InvalidValue(f"the store keeps template {t.name!r} version {new} with different content; "
                           f"choose a version never used before (e.g. `version: '{next_version(str(new))}'`)",
                           template=t.name, version=new)
    if read(kept_rel(t.name, str(old))) is None:
        files[kept_rel(t.name, str(old))] = existing.decode("utf-8")
    return files


def older_rules(store: Store, t: Template) -> str | None:
    """What a run on an older version of its template is told (`status`, `next`): the rules it
    moves by are not the newest the store or statedir holds (None: they are)."""
    version = t.doc.get("version")
    try:
        newest = template.load(t.name, store.root / "templates", store.cache_dir, allow_path=False)
    except StatedirError:
        return None
    latest = newest.doc.get("version")
    if version is None or latest is None or str(latest) == str(version):
        return None
    return (f"run on template {t.name} {version}, the older rules it was made with (it keeps them); new runs "
            f"get version {latest}")

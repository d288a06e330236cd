"""Stored template versions: a user's template is kept in the store at `templates/<name>.yaml`
(the newest); when a newer version replaces it, the older one stays as
`templates/<name>@<version>.yaml`, so every run keeps the version it started with."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from statedir.engine import template
from statedir.engine.template import Template
from statedir.errors import CorruptStore, InvalidValue, StatedirError
from statedir.files import yaml
from statedir.store import layout
from statedir.store.disk import Store


def kept_rel(name: str, version: str) -> str:
    return f"templates/{name}@{version}.yaml"


def next_version(version: str) -> str:
    """A suggestion: the last number bumped ('3.21' -> '3.22', '1' -> '2'), else '.1' appended."""
    match = re.search(r"(\d+)$", version)
    return version[: match.start()] + str(int(match[1]) + 1) if match else f"{version}.1"


def run_template(store: Store, name: str, version: str | None) -> Template:
    """The template a run started with: its kept version, else the newest the store holds or
    statedir ships when that is the same version."""
    folder = store.root / "templates"
    if version is not None and (folder / f"{name}@{version}.yaml").is_file():
        return template.load(str(folder / f"{name}@{version}.yaml"), cache_dir=store.cache_dir)
    t = template.load(name, folder, store.cache_dir, allow_path=False)
    if version is not None and t.doc.get("version") != version:
        # The store's copy was edited in place and its version bumped (not through `new --template`,
        # which keeps the old one as name@version.yaml), or statedir ships a newer version than the
        # run was made on (it keeps the older one beside it): else the run's version is in git's history.
        older = template.shipped_version(name, version) or from_history(store, name, version, "HEAD")
        if older is None:
            raise CorruptStore(f"a run uses template {name!r} version {version}, but the store holds version "
                               f"{t.doc.get('version')} only and its history has no version {version}; restore "
                               f"templates/{name}@{version}.yaml from git", template=name, version=version)
        return older
    return t


def from_history(store: Store, name: str, version: str, rev: str) -> Template | None:
    """Version `version` of the store's template `name` as a commit up to `rev` held it at
    `templates/<name>.yaml` (the newest such commit), or None. Read only where the kept file is
    missing, so no other command pays for it."""
    from statedir.errors import StatedirError
    from statedir.gitops import git, objects

    path = store.git_path(f"templates/{name}.yaml")
    try:
        shas = git.run(store.worktree, "log", "--format=%H", rev, "--", path).stdout.decode().split()
        with objects.Objects(store.worktree) as objs:
            for start in range(0, len(shas), 50):
                for found in objs.read_many([f"{sha}:{path}" for sha in shas[start:start + 50]]):
                    if found is None:
                        continue
                    try:
                        held = template.parse(found[2], f"templates/{name}.yaml@{version}")
                    except StatedirError:
                        continue
                    if str(held.doc.get("version")) == version:
                        return held
    except StatedirError:
        return None
    return None


def store_files(store: Store, t: Template, path: Path) -> dict[str, str]:
    """The template files a run on the user's template file `path` adds to the store: the
    newest at `templates/<name>.yaml`, and the version it replaces kept beside it."""
    return stored_files(store.read_bytes, t, path.read_bytes().decode("utf-8"))


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
                           f"and run `statedir new` again; runs on version {old} keep theirs",
                           template=t.name, version=old)
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

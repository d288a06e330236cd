"""`validate`: every store file (or the named ones) against its schema, all failures collected."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from statedir import schema, yaml
from statedir import store as store_mod
from statedir.cache import ParseCache
from statedir.errors import BadFile
from statedir.schema import Problem


def _store_root(path: Path) -> Path | None:
    for directory in path.resolve().parents:
        if (directory / store_mod.CONFIG).is_file():
            return directory
    return None


def check_file(path: Path, rel: str, shown: str, forced: str | None = None,
               cache: ParseCache | None = None) -> list[Problem]:
    """Problems of one store file (`rel` inside its store, `shown` as the user named it);
    bytes the parse cache already knows as valid are not parsed again."""
    name = forced or store_mod.schema_for(rel)
    if name is None:
        return []
    if path.is_symlink():
        return [Problem(shown, "$", "is a symlink; statedir files are regular files")]
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return [Problem(shown, "$", f"cannot read: {exc.strerror}")]
    header_ok = forced is not None or raw.startswith(yaml.HEADER_PREFIX.encode())
    if forced is None and name != "template":
        if cache is not None and header_ok and cache.knows(schema.cache_kind(name), raw):
            return []
        own = yaml.read_own(raw, store_mod.schema_ref(rel))  # statedir's own output, read without ruamel
        if own is not yaml.FOREIGN and not schema.validate(name, own, shown):
            if cache is not None:
                cache.put(schema.cache_kind(name), raw, own, True)
            return []
    try:
        doc = yaml.load(raw, shown)
    except BadFile as exc:
        line = exc.details.get("line")
        text = exc.message.removeprefix(f"{shown}:").removeprefix(f"{line}:").strip()
        return [Problem(shown, "$", f"line {line}: {text}" if line else text, line)]
    problems = []
    if not header_ok:
        first = yaml.header(store_mod.schema_ref(rel)).strip()
        problems.append(Problem(shown, "$", f"missing the first line {first!r}", 1))
    plain = yaml.to_plain(doc)
    problems += schema.validate(name, plain, shown, source=doc)
    if cache is not None and not problems and (plain is None or isinstance(plain, dict | list)):
        cache.put(schema.cache_kind(name), raw, plain, yaml.dump(plain, store_mod.schema_ref(rel)).encode() == raw)
    if name == "template" and not problems:
        from statedir import template

        try:
            template.parse(raw, shown)
        except BadFile as exc:
            problems.append(Problem(shown, "$", exc.message, exc.details.get("line")))
    return problems


def store(root: Path, progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """Every file statedir owns in the store at `root`; `progress(done, total)` after each file."""
    opened = store_mod.Store(root)
    root, cache = opened.root, opened.cache()
    problems: list[Problem] = []
    rels = [store_mod.CONFIG, *(f"templates/{p.name}" for p in sorted((root / "templates").glob("*.yaml")))]
    found: list[str] = []
    for directory, dirs, names in os.walk(root / "runs"):  # symlinked directories are not entered
        inside = os.path.relpath(directory, root).replace(os.sep, "/")
        for name in dirs:
            if os.path.islink(os.path.join(directory, name)):
                problems.append(Problem(f"{inside}/{name}", "$", "is a symlink; statedir files are regular files"))
        if inside != "runs":
            found += (f"{inside}/{name}" for name in names if name.endswith(".yaml"))
    rels += sorted(found, key=lambda rel: rel.split("/"))
    for done, rel in enumerate(rels, 1):
        problems += check_file(root / rel, rel, rel, cache=cache)
        if progress is not None:
            progress(done, len(rels))
    return problems


def files(paths: list[Path], forced: str | None = None) -> list[Problem]:
    """The named files, each checked against the schema its place in its store calls for
    (or against `forced`, a schema name, wherever they are)."""
    problems: list[Problem] = []
    for path in paths:
        shown = str(path)
        if forced is not None:
            problems += check_file(path, path.name, shown, forced)
            continue
        root = _store_root(path)
        if root is None:
            problems.append(Problem(shown, "$", "not inside a statedir store (no statedir.yaml above it)"))
            continue
        if not path.exists() and not path.is_symlink():
            problems.append(Problem(shown, "$", "no such file"))
            continue
        problems += check_file(path, path.resolve().relative_to(root).as_posix()
                               if not path.is_symlink() else path.name, shown)
    return problems

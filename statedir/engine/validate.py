"""`validate`: every store file (or the named ones) against its schema, all failures collected.

A run's files are checked against its template's compiled schemas (so a value the template
does not know is an error) and then against each other (statedir.engine.template.crossfile)."""
# Lazy imports: the template's flow (with dataclasses and inspect, about 12 ms of import, then its exploration), to
#   validate a template file: `doctor`, `sync` and validating run files load none of it.
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.engine import template, validated_runs
from statedir.engine.run_files import Runs
from statedir.errors import BadFile
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.files.parse_cache import ParseCache
from statedir.files.schema import Problem
from statedir.hints import Hint, said
from statedir.store import layout
from statedir.store import store as store_mod
from statedir.store.layout import JOURNAL


def _store_root(path: Path) -> Path | None:
    for directory in path.resolve().parents:
        if (directory / layout.CONFIG).is_file():
            return directory
    return None


def check_file(path: Path, rel: str, shown: str, forced: str | None = None,
               cache: ParseCache | None = None, scoped: dict[str, str] | None = None,
               keep: dict[str, Any] | None = None) -> list[Problem]:
    """Problems of one store file (`rel` inside its store, `shown` as the user named it);
    bytes the parse cache already knows as valid are not parsed again. `scoped` maps generic
    schema names to the run template's compiled ones; `keep` collects each valid file's data.
    A file checked against a `forced` schema may be any file the caller names: never quoted."""
    quote = forced is None
    generic = forced or layout.schema_for(rel)
    if generic is None:
        return []
    name = (scoped or {}).get(generic, generic)
    if path.is_symlink():
        return [Problem(shown, "$", "is a symlink; statedir files are regular files")]
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return [Problem(shown, "$", f"cannot read: {exc.strerror}")]
    header_ok = forced is not None or raw.startswith(yaml.HEADER_PREFIX.encode())
    ref = layout.own_ref(rel, raw)
    if forced is None and generic != "template":
        if cache is not None and header_ok and cache.knows(schema.cache_kind(name), raw):
            if keep is not None:
                hit = cache.get(schema.cache_kind(name), raw)
                if hit is not None:
                    keep[rel] = hit[0]
            return []
        own = yaml_fast_reader.read_own(raw, ref)  # statedir's own output, read without ruamel
        if own is not yaml_fast_reader.FOREIGN and not schema.validate(name, own, shown):
            if cache is not None:
                cache.put(schema.cache_kind(name), raw, own, True)
            if keep is not None:
                keep[rel] = own
            return []
    try:
        doc = yaml.load(raw, shown, quote=quote)
    except BadFile as exc:
        line = exc.details.get("line")
        text = exc.message.removeprefix(f"{shown}:").removeprefix(f"{line}:").strip()
        return [Problem(shown, "$", f"line {line}: {text}" if line else text, line)]
    problems = []
    if not header_ok:
        first = yaml.header(layout.schema_ref(rel)).strip()
        problems.append(Problem(shown, "$", f"missing the first line {first!r}", 1))
    plain = yaml.to_plain(doc)
    problems += schema.validate(name, plain, shown, source=doc, quote=quote)
    if cache is not None and not problems and (plain is None or isinstance(plain, dict | list)):
        cache.put(schema.cache_kind(name), raw, plain, yaml.dump(plain, ref).encode() == raw)
    if generic == "template":
        problems = [_at_line(p) for p in problems] or _template_meaning(raw, shown, quote)
    return problems


def _at_line(problem: Problem) -> Problem:
    """A template's problems name their line in the message too (templates are written by hand)."""
    if problem.line is None or problem.message.startswith("line "):
        return problem
    return problem.replaced(message=f"line {problem.line}: {problem.message}")


def _template_meaning(raw: bytes, shown: str, quote: bool) -> list[Problem]:
    from statedir.engine.template import flow as template_flow

    try:
        t = template.parse(raw, shown, quote=quote)
    except BadFile as exc:
        errors = exc.details.get("errors") or [{"path": "$", "message": exc.message, "line": exc.details.get("line")}]
        return [_at_line(Problem(shown, e["path"], e["message"], e.get("line"))) for e in errors]
    return [_at_line(p) for p in template_flow.found(t, raw)]  # a run of it can get stuck: the flow's check


def store(root: Path, progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """Every file statedir owns in the store at `root`; `progress(done, total)` after each file."""
    opened = store_mod.Store(root)
    with opened.reading():  # an interrupted transition is finished or undone first
        return _store(opened, progress)


def opened_store(opened: store_mod.Store, rels: list[str] | None = None) -> list[Problem]:
    """`store()` for a store this process has open (and may hold locked, as sync does); with
    `rels`, only those files and the cross-file rules of the runs they belong to."""
    with opened.reading():
        if rels is None:
            return _store(opened, None)
        return _check(opened, Runs(opened), [r for r in rels if (opened.root / r).is_file()], opened.cache())


def _store(opened: store_mod.Store, progress: Callable[[int, int], None] | None) -> list[Problem]:
    root, cache = opened.root, opened.cache()
    runs = Runs(opened)
    problems: list[Problem] = []
    rels = [layout.CONFIG, *(f"templates/{p.name}" for p in sorted((root / "templates").glob("*.yaml")))]
    if (root / "signers.yaml").exists() or (root / "signers.yaml").is_symlink():  # actors bound to signing keys
        rels.append("signers.yaml")
    found: list[str] = []
    remembered = validated_runs.Remembered(opened)  # runs as a validate found them valid
    entries: dict[str, list[str]] = {}
    for top in ("runs", "research"):  # the pipeline runs and the research ledger
        for directory, dirs, names in os.walk(root / top):  # symlinked directories are not entered
            inside = os.path.relpath(directory, root).replace(os.sep, "/")
            for name in dirs:
                if os.path.islink(os.path.join(directory, name)):
                    problems.append(Problem(f"{inside}/{name}", "$", "is a symlink; statedir files are regular files"))
            if inside != top:
                found += (f"{inside}/{name}" for name in names if name.endswith(".yaml"))
                if top == "runs":
                    entries.setdefault(inside.split("/")[1], []).extend(
                        [inside, *(f"{inside}/{name}" for name in (*dirs, *names))])
    for run_id, paths in entries.items():
        remembered.add(run_id, paths)
    rels += sorted(found, key=lambda rel: rel.split("/"))
    bus = root / "bus"  # handoff-bus sessions
    if bus.is_symlink():
        problems.append(Problem("bus", "$", "is a symlink; statedir files are regular files"))
    elif bus.is_dir():
        rels += sorted(f"bus/{p.name}" for p in bus.glob("*.yaml"))
    flagged = validated_runs.problem_runs([p.file for p in problems])
    todo = [rel for rel in rels if (run := validated_runs.run_of(rel)) is None or run in flagged
            or not remembered.unchanged(run)]
    skipped = len(rels) - len(todo)
    if progress is not None and skipped:  # the remembered runs' files count as checked: they are as found valid
        progress(skipped, len(rels))

    def step(done: int, total: int) -> None:
        if progress is not None:
            progress(skipped + done, skipped + total)

    out = problems + _check(opened, runs, todo, cache, progress=step)
    remembered.keep(set(entries) - validated_runs.problem_runs([p.file for p in out]))
    return out


def _check(opened: store_mod.Store, runs: Runs, rels: list[str], cache: ParseCache | None,
           shown: dict[str, str] | None = None,
           progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """The files `rels` of one store, each against its (run's compiled) schema, then the
    cross-file rules of every run they belong to whose files are valid."""
    problems: list[Problem] = []
    failed: set[str | None] = set()
    touched: dict[str, None] = {}  # the runs met, in order (a list's `in` made this quadratic in the runs)
    for done, rel in enumerate(rels, 1):
        run_id = validated_runs.run_of(rel)
        scoped = runs.schemas(run_id) if run_id else None
        found = check_file(opened.root / rel, rel, (shown or {}).get(rel, rel), cache=cache, scoped=scoped,
                           keep=runs.plain if run_id else None)
        problems += found
        if found:
            failed.add(run_id)
        if run_id:
            touched[run_id] = None
        if progress is not None:
            progress(done, len(rels))

    def display(rel: str) -> str:  # named files as the user named them, the others relative to here
        return (shown or {}).get(rel) or (os.path.relpath(opened.root / rel) if shown is not None else rel)

    later = list(runs.problems)
    for run_id in touched:
        if run_id not in failed:
            later += runs.cross_file(run_id)
    return problems + [p.replaced(file=display(p.file)) for p in later]


def files(paths: list[Path], forced: str | None = None, *, skip_outside: bool = False) -> list[Problem]:
    """The named files, each checked against the schema its place in its store calls for
    (or against `forced`, a schema name, wherever they are); with `skip_outside`, files in no
    store are passed over (the pre-commit hook sees every matching file of the repository)."""
    problems: list[Problem] = []
    by_store: dict[Path, list[tuple[str, str]]] = {}
    interrupted: set[Path] = set()
    for path in paths:
        shown = str(path)
        if forced is not None:
            problems += check_file(path, path.name, shown, forced)
            continue
        root = _store_root(path)
        if root is None:
            if not skip_outside:
                problems.append(Problem(shown, "$", "not inside a statedir store (no statedir.yaml above it)"))
            continue
        if (root / JOURNAL).exists() and root not in interrupted:  # never green on a half-written store
            interrupted.add(root)
            problems.append(Problem(str(root / JOURNAL), "$", said(
                "a transition was interrupted and is not rolled back yet; run `{hint}` (or any statedir command) "
                "in the store, then retry", Hint("validate"))))
        if not path.exists() and not path.is_symlink():
            problems.append(Problem(shown, "$", "no such file"))
            continue
        if path.is_symlink():
            problems += check_file(path, path.name, shown)
            continue
        by_store.setdefault(root, []).append((path.resolve().relative_to(root).as_posix(), shown))
    for root, named in by_store.items():
        opened = store_mod.Store(root)
        problems += _check(opened, Runs(opened), [rel for rel, _ in named], opened.cache(), dict(named))
    return problems

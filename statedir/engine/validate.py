"""`validate`: every store file (or the named ones) against its schema, all failures collected.

A run's files are checked against its template's compiled schemas (so a value the template
does not know is an error) and then against each other (statedir.engine.template_crossfile)."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.errors import BadFile, StatedirError
from statedir.files import schema, yaml, yaml_own
from statedir.files.parse_cache import ParseCache
from statedir.files.schema import Problem
from statedir.store import disk as store_mod
from statedir.store import layout
from statedir.store import run_logs as log_layout
from statedir.store.journal import JOURNAL


def _store_root(path: Path) -> Path | None:
    for directory in path.resolve().parents:
        if (directory / layout.CONFIG).is_file():
            return directory
    return None


def _plain(raw: bytes, rel: str) -> Any:
    own = yaml_own.read_own(raw, layout.own_ref(rel, raw))
    if own is not yaml_own.FOREIGN:
        return own
    try:
        return yaml.to_plain(yaml.load(raw, rel))
    except BadFile:
        return None


class Runs:
    """Per run of one store, read once: its template and the names of its compiled schemas."""

    def __init__(self, opened: store_mod.Store) -> None:
        self.store = opened
        self.context: dict[str, tuple[Any, dict[str, Any]] | None] = {}
        self.names: dict[tuple[str, Any, str], dict[str, str]] = {}
        self.problems: list[Problem] = []
        self.plain: dict[str, Any] = {}  # rel -> plain data, as the file checks read it

    def read(self, rel: str) -> Any:
        """A run file's plain data: as already read, else read now (None when unreadable)."""
        if rel not in self.plain:
            raw = self.store.read_bytes(rel) if (self.store.root / rel).is_file() else None
            self.plain[rel] = _plain(raw, rel) if raw else None
        return self.plain[rel]

    def of(self, run_id: str) -> tuple[Any, dict[str, Any]] | None:
        """(template, state) of a run whose state and template can be read, else None."""
        if run_id not in self.context:
            self.context[run_id] = self._read(run_id)
        return self.context[run_id]

    def _read(self, run_id: str) -> tuple[Any, dict[str, Any]] | None:
        from statedir.engine import template_versions

        try:
            state = self.read(f"runs/{run_id}/state.yaml")
        except StatedirError:
            return None
        if not isinstance(state, dict) or not isinstance(state.get("template"), str):
            return None
        try:
            t = template_versions.run_template(self.store, state)
        except StatedirError as exc:
            self.problems.append(Problem(f"runs/{run_id}/state.yaml", "$.template", exc.message))
            return None
        return t, state

    def schemas(self, run_id: str) -> dict[str, str] | None:
        """Generic schema name -> the run's compiled one."""
        from statedir.engine import template_compile as compile_mod

        found = self.of(run_id)
        if found is None:
            return None
        t = found[0]
        key = (t.name, t.doc.get("version"), t.source)
        if key not in self.names:
            self.names[key] = compile_mod.register(t)
        return self.names[key]

    def cross_file(self, run_id: str) -> list[Problem]:

        found = self.of(run_id)
        base = f"runs/{run_id}"
        folders = ("", "stages", "materials", "history")
        if found is None or any((self.store.root / base / d).is_symlink() for d in folders):
            return []  # a symlinked folder is reported as such, never entered
        try:
            return self._cross_file(run_id, *found)
        except StatedirError:
            return []  # what cannot be read is reported file by file

    def _cross_file(self, run_id: str, t: Any, state: dict[str, Any]) -> list[Problem]:
        from statedir.engine import template_crossfile

        base = f"runs/{run_id}"
        logs: dict[str, list[Any]] = {}
        for name in ("checkpoints", "integrity"):
            parts = [self.read(rel) or [] for rel in log_layout.files(self.store, base, name)]
            if not all(isinstance(entries, list) for entries in parts):
                return []  # the log's own problems are reported file by file
            logs[name] = [entry for entries in parts for entry in entries]
        out = template_crossfile.problems(self.store.root, run_id, t, state, logs)
        out += template_crossfile.undeclared_logs(self.store.root, t, base)
        records = {}
        for stage_id in t.stage_ids:
            record = self.read(f"{base}/stages/{stage_id}.yaml")
            if isinstance(record, dict):
                records[stage_id] = record
                out += template_crossfile.stage_counters(base, stage_id, record, logs)
                out += template_crossfile.stage_fields(t, base, stage_id, record)
        return out + template_crossfile.run_flow(t, base, state, records)


def _run_of(rel: str) -> str | None:
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "runs" else None


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
        own = yaml_own.read_own(raw, ref)  # statedir's own output, read without ruamel
        if own is not yaml_own.FOREIGN and not schema.validate(name, own, shown):
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
    from statedir.engine import template, template_flow

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
    for top in ("runs", "research"):  # the pipeline runs and the research ledger
        for directory, dirs, names in os.walk(root / top):  # symlinked directories are not entered
            inside = os.path.relpath(directory, root).replace(os.sep, "/")
            for name in dirs:
                if os.path.islink(os.path.join(directory, name)):
                    problems.append(Problem(f"{inside}/{name}", "$", "is a symlink; statedir files are regular files"))
            if inside != top:
                found += (f"{inside}/{name}" for name in names if name.endswith(".yaml"))
    rels += sorted(found, key=lambda rel: rel.split("/"))
    bus = root / "bus"  # handoff-bus sessions
    if bus.is_symlink():
        problems.append(Problem("bus", "$", "is a symlink; statedir files are regular files"))
    elif bus.is_dir():
        rels += sorted(f"bus/{p.name}" for p in bus.glob("*.yaml"))
    return problems + _check(opened, runs, rels, cache, progress=progress)


def _check(opened: store_mod.Store, runs: Runs, rels: list[str], cache: ParseCache | None,
           shown: dict[str, str] | None = None,
           progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """The files `rels` of one store, each against its (run's compiled) schema, then the
    cross-file rules of every run they belong to whose files are valid."""
    problems: list[Problem] = []
    failed: set[str | None] = set()
    touched: list[str] = []
    for done, rel in enumerate(rels, 1):
        run_id = _run_of(rel)
        scoped = runs.schemas(run_id) if run_id else None
        found = check_file(opened.root / rel, rel, (shown or {}).get(rel, rel), cache=cache, scoped=scoped,
                           keep=runs.plain if run_id else None)
        problems += found
        if found:
            failed.add(run_id)
        if run_id and run_id not in touched:
            touched.append(run_id)
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
            problems.append(Problem(str(root / JOURNAL), "$", "a transition was interrupted and is not rolled back "
                                    "yet; run `statedir validate` (or any statedir command) in the store, then retry"))
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

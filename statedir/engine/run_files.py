"""What `validate` reads once per run of a store: each run file's plain data, the run's template
and the names of its compiled schemas, and the checks across a run's files (statedir.engine.validate
checks each file with them)."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import compiled as compile_mod
from statedir.engine.template import crossfile as template_crossfile
from statedir.engine.template import versions as template_versions
from statedir.errors import BadFile, StatedirError
from statedir.files import yaml, yaml_fast_reader
from statedir.files.schema import Problem
from statedir.store import layout
from statedir.store import run_logs as log_layout
from statedir.store import store as store_mod


def _plain(raw: bytes, rel: str) -> Any:
    own = yaml_fast_reader.read_own(raw, layout.own_ref(rel, raw))
    if own is not yaml_fast_reader.FOREIGN:
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

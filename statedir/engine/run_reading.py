"""A run read off the store: its files as plain data (through the parse cache, the round-trip
documents on demand), its template and its logs. The read side of the one write path
(statedir.engine.transaction): `status`, `next` and every transition read runs through it."""
from __future__ import annotations

from typing import Any

from statedir.engine import run_settings, run_shape
from statedir.engine.template import Template
from statedir.engine.template import versions as template_versions
from statedir.engine.transition_data import RunData
from statedir.errors import CorruptStore, InvalidValue
from statedir.files import schema, yaml, yaml_fast_reader
from statedir.store import layout, run_logs
from statedir.store.store import Store


def _problems(rel: str, plain: Any, doc: Any = None) -> list[schema.Problem]:
    name = layout.schema_for(rel)
    return schema.validate(name, plain, rel, source=doc) if name else []


def _checked(rel: str, doc: Any) -> dict[str, Any]:
    plain = yaml.to_plain(doc)
    problems = _problems(rel, plain, doc)
    if problems or not isinstance(plain, dict):
        raise CorruptStore(f"{problems[0] if problems else rel + ': not a mapping'}; "
                           "fix the file or `git checkout` it", file=rel,
                           errors=[p.as_dict() for p in problems])
    return plain


class Sources:
    """The files a command read: plain data (through the parse cache), and on demand the
    round-trip documents that edits are merged into so hand comments survive."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cache = store.cache()
        self.raw: dict[str, bytes] = {}
        self.docs: dict[str, Any] = {}
        self.canonical: dict[str, bool] = {}

    def read_optional(self, rel: str) -> dict[str, Any] | None:
        """A file's plain data, None where it is absent (a stage without a file)."""
        raw = self.store.read_bytes(rel)
        return None if raw is None else self._parsed(rel, raw)

    def read(self, rel: str) -> dict[str, Any]:
        return self._parsed(rel, self.store.read_bytes(rel))

    def _parsed(self, rel: str, raw: bytes | None) -> dict[str, Any]:
        if not raw:
            raise CorruptStore(f"{rel} is missing or empty", file=rel)
        self.raw[rel] = raw

        def parse() -> tuple[Any, bool]:
            ref = layout.own_ref(rel, raw)
            own = yaml_fast_reader.read_own(raw, ref)
            if isinstance(own, dict) and not _problems(rel, own):
                return own, True
            doc = self.docs[rel] = yaml.load(raw, rel)  # ruamel: hand-edited text, or errors with lines
            plain = _checked(rel, doc)
            return plain, yaml.dump(plain, ref).encode() == raw

        plain, self.canonical[rel] = self.cache.through(schema.cache_kind(layout.schema_for(rel) or ""), raw, parse)
        return plain  # type: ignore[no-any-return]

    def round_trip(self, rel: str) -> Any:
        """The round-trip document to merge into, or None where a plain dump is identical."""
        if rel not in self.raw or self.canonical.get(rel):
            return None
        if rel not in self.docs:
            self.docs[rel] = yaml.load(self.raw[rel], rel)
        return self.docs[rel]


def load_run(store: Store, run_id: str, *, ledger: bool = False) -> tuple[Template, RunData, Sources]:
    """A run as plain data, its template, and the sources its files came from; with `ledger` (the
    keyword of the API's StateDir.load), its reset-boundary log (RunData.boundary_log) whatever the
    run settings say."""
    base = store.require_run(run_id)
    sources = Sources(store)
    state = sources.read(f"{base}/state.yaml")
    if state.get("run_id") != run_id:
        raise CorruptStore(f"{base}/state.yaml holds run_id {state.get('run_id')!r}", file=f"{base}/state.yaml")
    t = run_template(store, state)
    state = run_shape.filled_state(t, state)  # what the file leaves out at its defaults (statedir.engine.run_shape)
    stages = {sid: run_shape.filled_stage(t, sid, sources.read_optional(f"{base}/stages/{sid}.yaml"))
              for sid in t.stage_ids}
    passports = {label: sources.read(f"{base}/materials/{label}.yaml")
                 for label in state.get("current_version", {}).values()}
    run = RunData(run_id, state, stages, passports)
    if ledger or run_settings.effect_on(t, state, "reset_boundaries"):
        run.boundary_log = read_log(store, run_id, "reset_boundary")
    return t, run, sources


def read_log(store: Store, run_id: str, name: str) -> list[dict[str, Any]]:
    """A run's whole log, every segment in order ([] before its first entry)."""
    return run_logs.read(store, store.run_dir(run_id), name)


def run_template(store: Store, state: dict[str, Any]) -> Template:
    # A run names a template the store holds or statedir ships, never a path; and keeps its version.
    try:
        return template_versions.run_template(store, state)
    except InvalidValue:
        raise CorruptStore(f"run {state['run_id']} uses template {state['template']!r}, which the store "
                           "does not hold", template=state["template"]) from None

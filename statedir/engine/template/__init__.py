"""Pipeline templates: data files declaring stages, statuses, graph, materials, roles and caps.

This module holds `Template` and its loading; beside it: `compiled` (its JSON Schemas), `conditions`
(its declarative conditions), `meaning` and `flow` (what it means checked, its flow explored),
`crossfile` (the checks across a run's files), `identity` and `versions` (its name, version and
digest; the versions a store keeps), `catalog` (the templates a store can use)."""
# Lazy imports: the template's meaning checks (meaning, with failure_modes_meaning), run when a template is parsed:
#   one read from the parse cache is not, and a transition, `doctor` and `validate` load neither (`status --line`
#   and `next` load failure_modes_meaning only, through failure_modes).
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from statedir.argument_checks import names_a_file
from statedir.errors import BadFile, InvalidValue, UnknownMaterial, UnknownStage
from statedir.files import schema
from statedir.hints import HINT, Hint
from statedir.store.run_logs import LOGS

try:  # the builtin module: importing hashlib would load OpenSSL, a few ms on every command
    from _sha2 import sha256  # type: ignore[import-not-found]
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:  # pragma: no cover - other Pythons
        from hashlib import sha256  # type: ignore[assignment]
from statedir.files import yaml
from statedir.files.parse_cache import ParseCache

# Every append-only log statedir knows is listed with its layout (statedir.store.run_logs); a
# template declares which of them its runs hold, and every run holds statedir's own two.
OWN_LOGS = ("transitions", "reset_boundary")


class Template:
    """Read-only accessors over one validated template document (plain data)."""

    def __init__(self, doc: dict[str, Any], source: str) -> None:
        self.doc = doc
        self.source = source
        self.name: str = doc["name"]
        self.stages: list[dict[str, Any]] = doc["stages"]
        self.stage_ids = [s["id"] for s in self.stages]
        self._by_id = {s["id"]: s for s in self.stages}
        self.status = doc["statuses"]["roles"]
        self.statuses: list[str] = doc["statuses"]["values"]
        self.moves: dict[str, list[str]] = doc["statuses"]["moves"]
        self.pipeline = doc["pipeline_states"]
        self.graph: list[dict[str, Any]] = doc["graph"]
        self.materials: list[str] = doc.get("materials", [])
        self.series: list[dict[str, Any]] = doc.get("series", [])
        self.roles: dict[str, dict[str, Any]] = doc.get("roles", {})
        self.caps: dict[str, int] = doc.get("caps", {})
        self.checkpoints: dict[str, Any] = doc.get("checkpoints", {})
        self.terminal_targets = {self.pipeline["completed"], self.pipeline["aborted"]}
        self.logs = declared_logs(doc)
        # The run fields `statedir new` must be given; a template that says nothing needs a topic.
        self.required_run_fields: list[str] = doc.get("required_run_fields", ["topic"])

    @functools.cached_property
    def digest(self) -> str:
        """The content digest: with `name` and `version`, what identifies the template."""
        return content_digest(self.doc)

    # --- stages --------------------------------------------------------------------------
    def stage(self, stage_id: str) -> dict[str, Any]:
        return self._by_id[self.resolve_stage(stage_id)]

    def resolve_stage(self, raw: str) -> str:
        """The stage id for `raw` (an id or an alias), or UNKNOWN_STAGE."""
        stage_id = self.doc.get("aliases", {}).get(raw, raw)
        if stage_id not in self._by_id:
            raise UnknownStage(f"unknown stage {raw!r}; {self.name} has {', '.join(self.stage_ids)}",
                               stage=raw, known=self.stage_ids)
        return stage_id

    def display(self, stage_id: str) -> str:
        return self._by_id[stage_id].get("display", stage_id)

    def index(self, stage_id: str) -> int:
        return self.stage_ids.index(stage_id)

    def skippable(self, stage_id: str) -> bool:
        return bool(self.status.get("skipped")) and self._by_id[stage_id].get("skippable", True)

    def owner(self, stage_id: str) -> str | None:
        stage = self._by_id[stage_id]
        return stage.get("owner") or stage.get("skill")

    # --- graph -----------------------------------------------------------------------------
    def edges_from(self, stage_id: str) -> list[dict[str, Any]]:
        return [e for e in self.graph if e["from"] == stage_id]

    def prohibited(self, source: str, target: str) -> bool:
        return [source, target] in self.doc.get("prohibited", [])

    def entry_points(self) -> list[str]:
        return self.doc.get("entry_points", self.stage_ids[:1])

    # --- materials -------------------------------------------------------------------------
    def check_material(self, name: str) -> str:
        if name not in self.materials:
            raise UnknownMaterial(f"unknown material {name!r} for template {self.name}; its materials: "
                                  f"{', '.join(self.materials)}",
                                  material=name, known=self.materials)
        return name

    def series_of(self, material: str) -> dict[str, Any]:
        for series in self.series:
            if material in series["materials"]:
                return series
        return {"name": material, "label": f"{material}_v{{N}}", "materials": [material]}

    def series_of_label(self, label: str) -> str | None:
        """The series a version label belongs to, or None."""
        for name in {self.series_of(m)["name"]: None for m in self.materials}:
            pattern = self.series_of(self.series_by_name(name)["materials"][0])["label"]  # type: ignore[index]
            head, _, tail = pattern.partition("{N}")
            if label.startswith(head) and label.endswith(tail) and label[len(head):len(label) - len(tail)].isdigit():
                return name
        return None

    def series_by_name(self, name: str) -> dict[str, Any] | None:
        for series in self.series:
            if series["name"] == name:
                return series
        return self.series_of(name) if name in self.materials else None

    # --- roles -----------------------------------------------------------------------------
    def may(self, actor: str, action: str, stage_id: str | None = None) -> bool:
        if action in self.roles.get(actor, {}).get("may", []):
            return True
        if actor == USER and USER not in self.roles:  # the person at the terminal answers checkpoints
            return action in USER_MAY
        owned = stage_id is not None and self.owner(stage_id) == actor
        return owned and action in self.doc.get("owner_may", [])

    def roles_that_may(self, action: str, stage_id: str | None = None) -> list[str]:
        """The roles that may take `action` (on `stage_id`), by name: what a refusal names."""
        named = [*self.roles, *([] if USER in self.roles else [USER])]
        owner = self.owner(stage_id) if stage_id is not None else None
        return sorted({*(role for role in named if self.may(role, action, stage_id)),
                       *([owner] if owner and self.may(owner, action, stage_id) else [])})

    def default_actor(self) -> str:
        return self.doc.get("default_actor", "pipeline_orchestrator")


# The user's role where a template declares none: they answer checkpoints (and nothing else).
USER = "user"
USER_MAY = ("confirm",)
def content_digest(doc: Any) -> str:
    """sha256 of a template document as canonical JSON: its rules, whatever its comments and layout."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + sha256(text.encode("utf-8")).hexdigest()


def declared_logs(doc: dict[str, Any]) -> tuple[str, ...]:
    """The logs a run of this template holds, in statedir's order: its `logs:` and statedir's
    own two; every known log when the template predates `logs:`."""
    if "logs" not in doc:
        return LOGS
    return tuple(name for name in LOGS if name in doc["logs"] or name in OWN_LOGS)


def parse(raw: bytes, source: str, *, quote: bool = True) -> Template:
    """Validate a template file's bytes; a bad template is BAD_FILE naming the line. With
    quote=False (a file the caller named: it may be any file) no message quotes the text of a
    file that is no template."""
    doc = yaml.load(raw, source, quote=quote)
    plain = yaml.to_plain(doc)
    if not isinstance(plain, dict):
        raise BadFile(f"{source}: a template must be a YAML mapping", file=source)
    problems = schema.validate("template", plain, source, source=doc, quote=quote)
    if problems:
        first = problems[0]
        where = f"{source}:{first.line}" if first.line else source
        raise BadFile(f"{where}: invalid template at {first.path}: {first.message}", file=source,
                      line=first.line, errors=[_with_line(p) for p in problems])
    from statedir.engine.template import meaning as template_meaning

    found = [schema.Problem(source, template_meaning.json_path(path), message, schema._line_of(doc, path))  # noqa: SLF001
             for path, message in template_meaning.problems(plain)]
    if found:
        first = found[0]
        where = f"{source}:{first.line}" if first.line else source
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise BadFile(f"{where}: invalid template: {first.message}{more}", file=source, line=first.line,
                      errors=[_with_line(p) for p in found])
    return Template(plain, source)


def _with_line(problem: schema.Problem) -> dict[str, Any]:
    return {**problem.as_dict(), "line": problem.line}


def shipped() -> dict[str, Path]:
    """The templates statedir ships, newest version of each (`<name>@<version>.yaml` files are
    older versions kept for the runs made on them: `shipped_version`)."""
    return {p.stem: p for p in sorted(schema.data_dir("templates").glob("*.yaml")) if "@" not in p.stem}


def shipped_files() -> list[Path]:
    """Every template file statedir ships: each name's newest, and the older versions it keeps."""
    return sorted(schema.data_dir("templates").glob("*.yaml"))


def shipped_version(name: str, version: str) -> Template | None:
    """An older version of a shipped template, kept beside it for the runs made on it (None: not shipped)."""
    path = schema.data_dir("templates") / f"{name}@{version}.yaml"
    return _load_file(path) if not names_a_file("template", name) and path.is_file() else None


def _load_file(path: Path, cache_dir: Path | None = None, quote: bool = True) -> Template:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BadFile(f"cannot read template {path}: {exc.strerror}", file=str(path)) from None
    # Remembered by content, not by path: a long-lived caller (the API, the MCP server) sees an
    # edited template file, or the store's copy a sync or `new --template` replaced, as it is now.
    return _parsed_file(raw, path, cache_dir, quote)


@functools.cache
def _parsed_file(raw: bytes, path: Path, cache_dir: Path | None, quote: bool) -> Template:
    if cache_dir is None:
        return _parsed(raw, str(path), quote)
    return parse_cached(raw, str(path), cache_dir, quote=quote)


def parse_cached(raw: bytes, source: str, cache_dir: Path, *, quote: bool = True) -> Template:
    """parse(), its document remembered by content in the store's parse cache under `cache_dir`:
    a template read again (a transition's, a replay's) is read as JSON, not parsed with ruamel."""
    doc, _ = ParseCache(cache_dir / "parsed").through(schema.cache_kind("template"), raw,
                                                      lambda: (_parsed(raw, source, quote).doc, True))
    return Template(doc, source)


@functools.lru_cache(maxsize=64)
def _parsed(raw: bytes, source: str, quote: bool) -> Template:
    """A template parsed once per process whatever store asks (each store caches it on disk too)."""
    return parse(raw, source, quote=quote)


def load(name_or_path: str, store_templates: Path | None = None, cache_dir: Path | None = None, *,
         allow_path: bool = True) -> Template:
    """A template by name (the store's own first, then shipped) or, with allow_path, by file path."""
    if not allow_path or not names_a_file("template", name_or_path):
        if store_templates is not None and (store_templates / f"{name_or_path}.yaml").is_file():
            held = _load_file(store_templates / f"{name_or_path}.yaml", cache_dir)
            ships = shipped().get(name_or_path)
            if ships is not None:  # a name and version have one content: a store copy never shadows statedir's
                own = _load_file(ships, cache_dir)
                if own.doc.get("version") == held.doc.get("version") and own.digest != held.digest:
                    return own
            return held
        if name_or_path in shipped():
            return _load_file(shipped()[name_or_path], cache_dir)
        raise InvalidValue(f"unknown template {name_or_path!r}; see `{HINT}`", template=name_or_path,
                           hint=Hint("templates"))
    path = Path(name_or_path)
    if not path.is_file():
        raise InvalidValue(f"template file {name_or_path!r} does not exist", template=name_or_path)
    return _load_file(path.resolve(), cache_dir, quote=False)

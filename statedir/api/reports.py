"""The read-only reports of the Python API that the CLI prints: status, next, prereq, validate,
templates (mixed into StateDir)."""
# Lazy imports: api.moves, engine.failure_modes, engine.template, engine.template.catalog, engine.template.conditions,
#   engine.template.versions, engine.run_reading, engine.transaction, engine.validate, errors, files.schema,
#   history.snapshot, views.dashboard: each method imports what its own call uses, so a call pays for its own path
#   only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.api.opened import Opened
from statedir.argument_checks import checked


@checked
class Reports(Opened):
    """What a person reads off a store, as data: the reports (a dashboard, the legal moves, the
    prerequisites, a validation, the templates), not the views that render them (statedir.views)."""

    def status(self, run_id: str, *, at: str | None = None) -> dict[str, Any]:
        """The Progress Dashboard: its text, its one-line form, and its structure (stages with
        status, label and marker; the open checkpoint; the pipeline state); as of commit `at`
        where given (read from history, nothing checked out)."""
        from statedir.engine.template import versions as template_versions
        from statedir.views import dashboard

        if at is not None:
            from statedir.history import snapshot

            snap = snapshot.read_at(self.store, run_id, at)
            t, run = snap.template, snap.run
        else:
            t, run, _ = self.load(run_id)
        text, older = dashboard.render(t, run), template_versions.older_rules(self.store, t)
        audit = self._audit(t, run, run_id) if at is None else None
        failed = self._failed_schema_checks(t, run_id) if at is None else []
        text += "".join(f"\n{line}" for line in [*dashboard.schema_lines(failed), *dashboard.audit_lines(audit)])
        return {"run_id": run_id, "dashboard": text + (f"\n  Rules: {older}" if older else ""),
                "line": dashboard.line(t, run), **dashboard.structure(t, run), **({"rules": older} if older else {}),
                **({"schema_checks_failed": failed} if failed else {}),
                **({"failure_mode_audit": audit} if audit else {})}

    def _failed_schema_checks(self, t: Any, run_id: str) -> list[dict[str, Any]]:
        """The schema checks of the run that failed and stand (templates naming material_schemas)."""
        from statedir.engine import run_reading
        from statedir.views import dashboard

        if not t.doc.get("material_schemas"):
            return []
        return dashboard.failed_schema_checks(run_reading.read_log(self.store, run_id, "schema_validation"))

    def _audit(self, t: Any, run: Any, run_id: str) -> dict[str, Any] | None:
        """The failure-mode audit the Stage 6 summary shows: at the template's last stage (the
        process summary) or once the run ended, where the template has the checklist (else None)."""
        from statedir.engine import failure_modes, run_reading

        if not failure_modes.declared(t) or (run.state.get("current_stage") != t.stage_ids[-1]
                                             and run.state["pipeline_state"] not in t.terminal_targets):
            return None
        return failure_modes.audit(t, run_reading.read_log(self.store, run_id, "failure_modes"))

    def next(self, run_id: str) -> dict[str, Any]:
        """The legal moves from the run's state, found by asking the rules, and what blocks the
        rest: {run_id, current_stage, pipeline_state, moves: [{command, args, allowed, actor}],
        blocked: [{move, needs}]}."""
        from statedir.api import moves
        from statedir.engine import transaction
        from statedir.engine.template import versions as template_versions

        t, run, _ = self.load(run_id, ledger=True)
        found = moves.legal_moves(self.store, t, run, transaction.utc_now())
        older = template_versions.older_rules(self.store, t)
        return {**found, "rules": older} if older else found

    def prereq(self, run_id: str, stage: str) -> dict[str, Any]:
        """check_prerequisites: {prerequisites_met, missing_required, missing_recommended, warning}."""
        from statedir.engine.template import conditions

        t, run, _ = self.load(run_id)
        return conditions.prerequisites(t, run.state, run.stages, t.resolve_stage(stage))

    def validate(self, files: list[str] | None = None, *, schema: str | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Check store files (all of them, or `files`, each against its schema or `schema`):
        {valid, checked, errors: [{file, path, message}]}; files are store-relative."""
        from statedir.engine import validate as validate_mod
        from statedir.errors import InvalidValue
        from statedir.files import schema as schema_mod

        if schema is not None and schema not in schema_mod.schema_names():
            raise InvalidValue(f"unknown schema {schema!r}; one of {', '.join(schema_mod.schema_names())}",
                               argument="schema")
        counted = [0]

        def count(done: int, total: int) -> None:
            counted[0] = total
            if progress is not None:
                progress(done, total)

        if files:
            problems = validate_mod.files([Path(f) for f in files], schema)
            counted[0] = len(files)
        else:
            problems = validate_mod.store(self.store.root, progress=count)
        return {"valid": not problems, "checked": counted[0], "errors": [p.as_dict() for p in problems]}

    def templates(self) -> list[dict[str, Any]]:
        """The templates statedir ships and this store holds: name, version, source, title."""
        from statedir.engine.template import catalog as template_catalog

        return template_catalog.listed(self.store.root / "templates")

    def template(self, name: str) -> dict[str, Any]:
        """One template's own vocabulary: stages, statuses and their moves, pipeline states,
        actors and their actions, materials, and the run fields `new` needs."""
        from statedir.engine import template as template_mod
        from statedir.engine.template import catalog as template_catalog

        return template_catalog.describe(template_mod.load(name, self.store.root / "templates"))

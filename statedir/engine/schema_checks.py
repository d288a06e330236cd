"""The schema check of a stage's outputs at each transition out of it (`schema_validation_log`).

The template names, per material, the schema its outputs are checked against and the fields it
requires (`material_schemas`): `fields`, found in the material's registered files (their
passport keeps what each held when registered), or `stage_fields`, found set on the stage's own
record (an integrity report is the record `integrity` writes). A material registered without a
file has nothing to check: it is named `unchecked`, never counted a PASS. Where the template
says `schema_check_names_unchecked`, the entry also names `not_checked` the schemas the stage
lists (`schemas_checked`) that none of its registered outputs was checked against: an entry
with nothing checked says so, and what it did not check. Templates without
`material_schemas` (runs made on older versions) keep the entry they always wrote.
"""
from __future__ import annotations

from typing import Any

from statedir.engine.template import Template
from statedir.engine.transition_data import RunDraft


def declared(t: Template) -> dict[str, Any]:
    return t.doc.get("material_schemas") or {}


def passport_files(t: Template, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A passport's file entries: with the fields each holds where the template checks them."""
    if declared(t):
        return [dict(f) for f in files]
    return [{k: v for k, v in f.items() if k != "fields"} for f in files]


def check(t: Template, draft: RunDraft, stage_id: str) -> dict[str, Any] | None:
    """The check of the stage's registered outputs (None: the template names no material schemas)."""
    schemas = declared(t)
    if not schemas:
        return None
    record = draft.view(stage_id)
    checked: list[str] = []
    missing: list[str] = []
    unchecked: list[str] = []
    for name, passport in _outputs(t, draft, stage_id):
        spec = schemas.get(name)
        if not spec:
            continue
        if "stage_fields" in spec:
            missing += [f"{name}.{f}" for f in spec["stage_fields"] if record.get(f) is None]
        else:
            files = (passport or {}).get("files") or []
            if not files or any("fields" not in f for f in files):
                unchecked.append(name)  # no file (or one registered before fields were read): nothing to check
                continue
            held = {field for f in files for field in f["fields"]}
            missing += [f"{name}.{f}" for f in spec.get("fields", []) if f not in held]
        if spec["schema"] not in checked:
            checked.append(spec["schema"])
    entry: dict[str, Any] = {"schemas_checked": checked, "result": "FAIL" if missing else "PASS",
                             "missing_fields": missing}
    if unchecked:
        entry["unchecked"] = unchecked
    if t.doc.get("schema_check_names_unchecked"):
        not_checked = [name for name in t.stage(stage_id).get("schemas_checked", []) if name not in checked]
        if not_checked:
            entry["not_checked"] = not_checked
    return entry


def lacking(t: Template, names: list[str], files: list[dict[str, Any]]) -> str | None:
    """What registering `names` with `files` tells at once (not first at the stage's checkpoint):
    the fields their schemas require that the files do not hold (None: all held, or nothing read)."""
    if not files or any("fields" not in f for f in files):
        return None
    held = {field for f in files for field in f["fields"]}
    missing = [f"{name}.{field}" for name in names for field in declared(t).get(name, {}).get("fields", [])
               if field not in held]
    if not missing:
        return None
    return (f"the file{'s' if len(files) > 1 else ''} registered lack{'' if len(files) > 1 else 's'} "
            f"{', '.join(missing)}, which the schema check asks of them when the stage is left (a top-level key of "
            "a YAML or JSON file or of its front matter, or a Markdown heading: '## Some Field' holds "
            "some_field)")


def warning(t: Template, stage_id: str, entry: dict[str, Any]) -> str | None:
    """The upstream State Tracker's "format mismatch -> notify": what a FAIL tells the orchestrator."""
    if entry["result"] != "FAIL":
        return None
    return (f"schema check of stage {t.display(stage_id)}'s outputs: FAIL, missing "
            f"{', '.join(entry['missing_fields'])}; re-produce the material and register it again")


def _outputs(t: Template, draft: RunDraft, stage_id: str) -> list[tuple[str, dict[str, Any] | None]]:
    """The registered materials of the series the stage produces, each with its current version's
    passport: the materials that version was registered as (None where no passport holds it)."""
    state, made = draft.state, []
    passports = {**draft.run.passports, **draft.passports}
    for series_name in t.stage(stage_id).get("produces", []):
        series = t.series_by_name(series_name) or {}
        passport = passports.get(state.get("current_version", {}).get(series_name, ""))
        names = (passport.get("materials") or []) if passport else \
            [m for m in series.get("materials", []) if state.get("materials", {}).get(m)]
        made += [(name, passport) for name in names]
    return made

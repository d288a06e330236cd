"""Mid-entry by the rules of templates that declare `mid_entry` (academic-pipeline 3.22): the
passport stands for content the user brings unchanged, for the integrity check it records
(`integrity_mode`: a pre-review pass never stands for the final check), and what it stands for,
with the files the entry stage registers (`mid_entry.registers`), is registered at entry."""
from __future__ import annotations

from typing import Any

from statedir.engine import materials
from statedir.engine.template import Template
from statedir.engine.transition_data import Change
from statedir.errors import ContentChanged, IllegalTransition, InvalidValue
from statedir.hints import opt


def declared(t: Template) -> bool:
    return t.doc.get("mid_entry") is not None


def integrity_stages(t: Template) -> list[str]:
    return [s for s in t.stage_ids if "integrity" in t.stage(s)]


def mode_of(t: Template, stage_id: str) -> str | None:
    return t.stage(stage_id).get("integrity", {}).get("mode")


def check_passport(t: Template, guarded: list[str], entry: str, passport: dict[str, Any],
                   file: dict[str, str] | None) -> None:
    """Refused unless the passport stands for the file brought and for the last integrity check
    entering at `entry` skips."""
    label = passport.get("version_label")
    recorded = passport.get("content_hash")
    if not recorded:
        raise IllegalTransition(f"the passport {label} names no content_hash: it cannot show that the content has "
                                "not changed since its integrity pass; bring a passport with the SHA-256 of the "
                                "verified file, and that file ({opt:file})", passport=label)
    same_content(passport, file)
    checks = integrity_stages(t)
    if not checks:
        return
    modes = {mode_of(t, s): s for s in checks}
    given = passport.get("integrity_mode")
    if given is not None and given not in modes:
        raise InvalidValue(f"the passport {label} records integrity_mode {given!r}; the template's integrity "
                           f"checks are {', '.join(str(m) for m in modes)}", passport=label, allowed=list(modes))
    stands_for = modes[given] if given is not None else checks[0]  # a passport before modes: the first check
    skipped = [s for s in guarded if s in checks]
    last = skipped[-1] if skipped else stands_for
    if t.index(last) > t.index(stands_for):
        raise IllegalTransition(
            f"entering at stage {t.display(entry)} skips stage {t.display(last)} ({mode_of(t, last)}), and the "
            f"passport {label} stands for the {mode_of(t, stands_for)} check of stage {t.display(stands_for)} only: "
            f"stage {t.display(last)} is never satisfied by an earlier stage's pass; bring a passport of a "
            f"{mode_of(t, last)} pass for this content (integrity_mode: {mode_of(t, last)}), or enter at stage "
            f"{_entries_on(t, stands_for)} on this one", passport=label, needs=[f"integrity_mode {mode_of(t, last)}"])


def same_content(passport: dict[str, Any], file: dict[str, str] | None) -> None:
    """Refused unless `file` (the one the user brings) is the content the passport's content_hash names."""
    label, recorded = passport.get("version_label"), passport.get("content_hash")
    if file is None:
        raise IllegalTransition(f"the passport {label} stands for a file of SHA-256 {str(recorded)[:12]}...: bring "
                                "that file ({opt:file}) so statedir can compare it", argument="file")
    if file.get("content_hash") != recorded:
        raise ContentChanged(f"the file {file.get('path')} has changed since the passport {label} was verified "
                             f"(SHA-256 {file.get('content_hash', '')[:12]}..., the passport's {str(recorded)[:12]}"
                             "...): verify the new content instead", file=file.get("path"), passport=label)


def _entries_on(t: Template, stands_for: str) -> str:
    """The entry points past `stands_for` a passport of its check lets a run enter at."""
    later = [s for s in integrity_stages(t) if t.index(s) > t.index(stands_for)]
    limit = t.index(later[0]) if later else len(t.stage_ids)
    return " or ".join(t.display(e) for e in t.entry_points() if t.index(stands_for) < t.index(e) <= limit)


def register(t: Template, state: dict[str, Any], change: Change, guarded: list[str], entry: str, now: str,
             brought: list[dict[str, Any]]) -> None:
    """What the passport stands for (each skipped integrity stage's report) and the files the
    entry stage registers from what the user brings, each the next version of its series."""
    register_reports(t, state, guarded)
    register_brought(t, state, change, entry, now, brought)


def register_reports(t: Template, state: dict[str, Any], guarded: list[str]) -> None:
    """Each skipped integrity stage's report, which the passport stands for."""
    for stage_id in guarded:
        report = t.stage(stage_id).get("integrity", {}).get("report_material")
        if report:
            state["materials"][report] = True


def registers(t: Template, entry: str) -> list[str]:
    """The materials entering at `entry` registers from the files the user brings."""
    return list(((t.doc.get("mid_entry") or {}).get("registers") or {}).get(entry, []))


def register_brought(t: Template, state: dict[str, Any], change: Change, entry: str, now: str,
                     brought: list[dict[str, Any]]) -> None:
    names = registers(t, entry)
    if len(brought) != len(names):
        if not names:
            takes = {stage: names for stage, names in ((t.doc.get("mid_entry") or {}).get("registers") or {}).items()}
            raise InvalidValue(f"entering at stage {t.display(entry)} registers no material from a file brought; "
                               "{opt:entry_material} is for entering at " + "; ".join(
                                   f"{t.display(s)} ({', '.join(n)})" for s, n in takes.items()),
                               argument="entry_material")
        raise InvalidValue(f"entering at stage {t.display(entry)} registers {', '.join(names)} from the files the "
                           f"user brings: give {len(names)} {opt('entry_material')} FILE, in this order "
                           f"({len(brought)} given)", argument="entry_material", needs=names)
    for name, file in zip(names, brought, strict=True):
        label, passport, stale = materials.register(
            t, state, change.passports, [name], now, origin_skill=None, origin_mode=None, files=[file],
            upstream=[])
        change.passports.update({**stale, label: passport})


def sample(t: Template, entry: str, now: str) -> dict[str, Any]:
    """new_run's mid-entry arguments a user entering at `entry` brings (for the flow check): a
    fresh VERIFIED passport of the last skipped integrity check, its file, and the files the entry
    registers."""
    guarded = [s for s in t.stage_ids[: t.index(entry)] if s in integrity_stages(t)]
    series_name = t.stage(guarded[0])["integrity"].get("verifies_draft_series") if guarded else None
    series = t.series_by_name(series_name or "") if series_name else None
    if series is None:
        return {}
    digest = "0" * 64
    passport = {"version_label": materials.label_for(series, 1), "series": series["name"],
                "materials": series["materials"][:1], "origin_skill": None, "origin_mode": None,
                "origin_date": now, "verification_status": "VERIFIED", "content_hash": digest, "files": [],
                "integrity_pass_date": now, "upstream_dependencies": [], "repro_lock": None,
                **({"integrity_mode": mode_of(t, guarded[-1])} if declared(t) else {})}
    brought = [{"path": f"{name}.md", "content_hash": digest} for name in registers(t, entry)]
    return {"passport": passport, "confirm_skip": True, "file": {"path": "draft.md", "content_hash": digest},
            "brought": brought}

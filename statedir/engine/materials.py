"""Material versions and Material Passports (Schema 9): labels, registration, staleness."""
from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any

from statedir.engine.template import Template
from statedir.errors import InvalidValue, UnknownMaterial
from statedir.gitops import object_ids

if TYPE_CHECKING:
    import datetime

LABEL_RE = re.compile(r"^(?P<prefix>.+)_v(?P<n>[1-9][0-9]*)$")


def label_for(series: dict[str, Any], number: int) -> str:
    return series["label"].replace("{N}", str(number))


def parse_label(t: Template, state: dict[str, Any], label: str) -> tuple[str, int]:
    """(series name, N) of an existing version label, or UNKNOWN_MATERIAL."""
    match = LABEL_RE.match(label)
    if match:
        number = int(match["n"])
        for name, count in state.get("version_counters", {}).items():
            series = t.series_by_name(name)
            if series and label_for(series, number) == label and number <= count:
                return name, number
    raise UnknownMaterial(f"no material version {label!r} in this run", label=label)


def series_for(t: Template, names: list[str]) -> dict[str, Any]:
    """The one version series all `names` belong to (a bundle shares one version)."""
    for name in names:
        t.check_material(name)
    groups = {t.series_of(name)["name"] for name in names}
    if len(groups) != 1:
        raise InvalidValue(f"materials {', '.join(names)} belong to different version series "
                           f"({', '.join(sorted(groups))}); register them separately", materials=names)
    return t.series_of(names[0])


def register(t: Template, state: dict[str, Any], passports: dict[str, dict[str, Any]],
             names: list[str], now: str, *, origin_skill: str | None, origin_mode: str | None,
             files: list[dict[str, str]], upstream: list[str],
             derived_from: str | None = None,
             request_id: str | None = None) -> tuple[str, dict[str, Any], dict[str, dict[str, Any]]]:
    """Next version of a series: mutates `state`; returns (label, passport, passports made STALE).
    The passport names the request that registered it: two versions registered alike on two
    machines stay two versions when they merge (statedir.merge.versions)."""
    series = series_for(t, names)
    for label in upstream:
        parse_label(t, state, label)
    counters = state.setdefault("version_counters", {})
    number = counters.get(series["name"], 0) + 1
    label = label_for(series, number)
    counters[series["name"]] = number
    state.setdefault("current_version", {})[series["name"]] = label
    for name in names:
        state.setdefault("materials", {})[name] = True
    content_hash = None
    if len(files) == 1:
        content_hash = files[0]["content_hash"]
    elif files:  # SHA-256 of the files' hashes (object_ids loads hashlib, OpenSSL, only for it: `next` does without)
        content_hash = object_ids.hashed("".join(f["content_hash"] for f in files).encode(), 32).hexdigest()
    passport = {
        "version_label": label, "series": series["name"], "materials": list(names),
        "origin_skill": origin_skill, "origin_mode": origin_mode, "origin_date": now,
        "verification_status": "UNVERIFIED", "content_hash": content_hash, "files": files,
        "integrity_pass_date": None, "upstream_dependencies": list(upstream), "repro_lock": None,
        "derived_from": derived_from,
    }
    if request_id is not None:
        passport["request_id"] = request_id
    return label, passport, stale_dependents(t, state, passports, series["name"], number)


def stale_dependents(t: Template, state: dict[str, Any], passports: dict[str, dict[str, Any]],
                     series_name: str, number: int) -> dict[str, dict[str, Any]]:
    """Current passports that depend on an older version of `series_name`, marked STALE."""
    changed = {}
    for label, passport in passports.items():
        if passport.get("verification_status") == "STALE":
            continue
        for dep in passport.get("upstream_dependencies", []):
            try:
                dep_series, dep_number = parse_label(t, state, dep)
            except UnknownMaterial:
                continue
            if dep_series == series_name and dep_number < number:
                changed[label] = {**copy.deepcopy(passport), "verification_status": "STALE"}
                break
    return changed


def effective_status(passport: dict[str, Any], now: datetime.datetime, stale_hours: float) -> str:
    """VERIFIED reads as STALE once its integrity pass is older than the window."""
    status = passport.get("verification_status", "UNVERIFIED")
    if status != "VERIFIED":
        return status
    passed = passport.get("integrity_pass_date")
    if not passed:
        return "STALE"
    when = now.fromisoformat(passed.replace("Z", "+00:00"))  # `now`'s own class: this module imports no datetime
    return "STALE" if (now - when).total_seconds() > stale_hours * 3600 else "VERIFIED"

"""Every version of a material or series, oldest first, with its passport and the commit
that made it (read from one `git log` of the run's materials folder): the commit of the request
that registered it (the passport's request id), so a version a merge renumbered is credited to
the commit that wrote its content, not to the one that first wrote its label's file."""
from __future__ import annotations

from typing import Any

from statedir.engine import materials
from statedir.engine.template import Template
from statedir.gitops import git
from statedir.history import path_index
from statedir.store.store import Store


def series_name(t: Template, material: str) -> str:
    """The series `material` names: a series name, or the series a material belongs to."""
    found = t.series_by_name(material)
    if found is not None:
        return str(found["name"])
    return str(t.series_of(t.check_material(material))["name"])  # UNKNOWN_MATERIAL otherwise


def adding_commits(store: Store, run_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """(passport file name -> the newest commit that added it, request id -> its commit), of the
    commits that touched the run's materials (both sides of a merge)."""
    folder = store.git_path(f"{store.run_dir(run_id)}/materials")
    if not git.head(store.worktree):
        return {}, {}
    listed = path_index.commits(store, folder, order="full")  # remembered: only those commits are read
    out = path_index.records(store, listed, "--no-renames",
                             "--format=%x1e%H%x1f%(trailers:key=Statedir-Request-Id,valueonly,separator=%x2C)",
                             "--name-status", "-z", "--", folder).decode("utf-8", "surrogateescape")
    made: dict[str, str] = {}
    requests: dict[str, str] = {}
    for record in out.split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        sha, _, request = head.strip("\0").partition("\x1f")
        if request.strip():
            requests.setdefault(request.strip(), sha)
        fields = names.strip("\n\0").split("\0")
        for status, name in zip(fields[::2], fields[1::2], strict=False):
            if status == "A" and name:
                made.setdefault(name.rpartition("/")[2], sha)
    return made, requests


def versions(store: Store, run_id: str, material: str, t: Template,
             passports: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """[{version_label, commit, passport}] oldest first: every version of the series `material`
    names, or, for a material that is not also a series' name, the versions holding it; `commit`
    is None for a passport no commit added (it was written by hand and not committed)."""
    name = series_name(t, material)
    whole = any(series["name"] == material for series in t.series)

    def number(label: str) -> int:
        match = materials.LABEL_RE.match(label)
        return int(match["n"]) if match else 0

    mine = [label for label, p in passports.items()
            if p.get("series") == name and (whole or material in p.get("materials", []))]
    made, requests = adding_commits(store, run_id) if mine else ({}, {})  # none: no history to read

    def commit(label: str) -> str | None:
        request = passports[label].get("request_id")
        return (requests.get(request) if isinstance(request, str) else None) or made.get(f"{label}.yaml")

    return [{"version_label": label, "commit": commit(label), "passport": passports[label]}
            for label in sorted(mine, key=lambda label: (number(label), label))]

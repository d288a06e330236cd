"""Version series merged across machines: a version registered on both sides is two versions.

Two machines that register the next version of one series both take the same label (the run's
counter plus one). The merge keeps both: where two registrations claim one label, the one
registered first (by its request id, else its origin date) keeps it and the other takes the
next free label of its series; every reference to a moved label in its own side's files (the
passport's `version_label`, other passports' upstream dependencies and `derived_from`, the
run's current version, stage outputs that name it) moves with it. The run's counter and current
version then name the highest label. No label names two contents, whatever the order of merges.

git merges one file at a time and cannot rename one, so this is a merge of a run's folder:
`statedir sync` writes it where git's merge of a passport conflicted, and verify expects it of
such a merge commit (statedir.history.merge_check). A plain `git merge` refuses the passport
(its report says to use sync).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from statedir.engine.materials import LABEL_RE
from statedir.errors import StatedirError
from statedir.files import yaml
from statedir.merge import driver, rules
from statedir.store import layout

Files = Mapping[str, bytes]  # store-relative path -> bytes, of one run's state, stages and passports
_PASSPORT = re.compile(r"^runs/[^/]+/materials/(?P<label>[^/]+)\.yaml$")
_CREATION = ("series", "materials", "origin_skill", "origin_mode", "origin_date", "content_hash", "files")


def passports(files: Files) -> dict[str, dict[str, Any]]:
    """label -> passport of one side (StatedirError where one cannot be read)."""
    out = {}
    for rel, raw in files.items():
        match = _PASSPORT.match(rel)
        if match:
            plain = driver.read_plain(raw, rel)
            if not isinstance(plain, dict):
                raise StatedirError(f"{rel} is not a passport")
            out[match["label"]] = plain
    return out


def _registration(passport: dict[str, Any]) -> str:
    """Which registration made a passport: its request id, else what it was made with."""
    request_id = passport.get("request_id")
    if isinstance(request_id, str):
        return rules.identity([passport.get("series"), request_id])
    return rules.identity({key: passport.get(key) for key in _CREATION})


def _order(passport: dict[str, Any]) -> tuple[str, str, str]:
    """Which of two registrations came first."""
    return (str(passport.get("origin_date") or ""), str(passport.get("request_id") or ""), _registration(passport))


def _number(label: str) -> int:
    match = LABEL_RE.match(label)
    return int(match["n"]) if match else 0


def labels(sides: list[dict[str, dict[str, Any]]]) -> list[dict[str, str]] | None:
    """The moves of base, ours and theirs (old label -> new label) from their passports (label
    -> passport); None where no two registrations claim one label. The base moves too, so that
    a label one side moved away from reads as moved, not deleted, file by file."""
    where = [{_registration(p): label for label, p in side.items()} for side in sides]
    made = {key: p for side in sides for p in side.values() for key in [_registration(p)]}
    chosen: dict[str, str] = {}
    for key in where[1].keys() | where[2].keys():
        mine, other, old = where[1].get(key), where[2].get(key), where[0].get(key)
        if mine and other and mine != other:  # an earlier merge moved it on one side: that side's
            chosen[key] = other if mine == old else mine if other == old else max(mine, other, key=_number)
        else:
            chosen[key] = mine or other or ""
    claims: dict[str, list[str]] = {}
    for key, label in chosen.items():
        claims.setdefault(label, []).append(key)
    movers = []
    for label, keys in claims.items():
        if len(keys) > 1:
            keep = next((k for k in keys if where[0].get(k) == label), None) or min(keys, key=lambda k: _order(made[k]))
            movers += [k for k in keys if k != keep]
    if not movers:
        return None
    top: dict[str, int] = {}
    for key, label in chosen.items():
        series = str(made[key].get("series"))
        top[series] = max(top.get(series, 0), _number(label))
    for key in sorted(movers, key=lambda k: _order(made[k])):
        series, match = str(made[key].get("series")), LABEL_RE.match(chosen[key])
        if match is None:
            return None
        top[series] += 1
        chosen[key] = f"{match['prefix']}_v{top[series]}"
    return [{label: chosen[key] for key, label in side.items() if key in chosen and chosen[key] != label}
            for side in where]


def _moved_text(text: str, moves: dict[str, str]) -> str:
    """Free text (a stage's outputs) with each moved label, as a whole word, renamed."""
    if not moves:
        return text
    pattern = re.compile(r"(?<![A-Za-z0-9_.-])(" + "|".join(map(re.escape, sorted(moves, key=len, reverse=True)))
                         + r")(?![A-Za-z0-9_.-])")
    return pattern.sub(lambda m: moves[m[1]], text)


def _moved(value: Any, moves: dict[str, str]) -> Any:
    if isinstance(value, list):
        return [moves.get(item, item) if isinstance(item, str) else item for item in value]
    return moves.get(value, value) if isinstance(value, str) else value


def _rewrite(files: Files, moves: dict[str, str], state: dict[str, Any]) -> dict[str, bytes]:
    """One side's files with its labels moved; `state`: the run's state.yaml as the merge wants it."""
    out: dict[str, bytes] = {}
    for rel, raw in files.items():
        match = _PASSPORT.match(rel)
        plain = driver.read_plain(raw, rel)
        if match:
            new = {**plain, "version_label": moves.get(match["label"], match["label"])}
            for key in ("upstream_dependencies", "derived_from"):
                if key in plain:
                    new[key] = _moved(plain[key], moves)
            target = f"{rel.rpartition('/')[0]}/{new['version_label']}.yaml"
        elif rel.endswith("/state.yaml"):
            new, target = state, rel
        elif isinstance(plain, dict) and isinstance(plain.get("outputs"), list):  # a stage
            new, target = {**plain, "outputs": [_moved_text(o, moves) if isinstance(o, str) else o
                                                 for o in plain["outputs"]]}, rel
        else:
            new, target = plain, rel
        out[target] = raw if new == plain else yaml.dump(new, layout.own_ref(target, raw)).encode("utf-8")
    return out


def _state(raw: bytes | None, rel: str, moves: dict[str, str], counters: dict[str, int],
           current: dict[str, str]) -> dict[str, Any]:
    plain = driver.read_plain(raw, rel) if raw is not None else {}
    if not isinstance(plain, dict):
        raise StatedirError(f"{rel} is not a run's state")
    versions = {series: _moved(label, moves) for series, label in (plain.get("current_version") or {}).items()}
    return {**plain, "current_version": {**versions, **current},
            "version_counters": {**(plain.get("version_counters") or {}), **counters}}


def renumbered(base: Files, ours: Files, theirs: Files) -> list[dict[str, bytes]] | None:
    """Base, ours and theirs with the concurrent versions given labels apart (the run's counter
    and current version of a series with moved labels agreed on both sides: its highest label),
    or None where no label was claimed twice."""
    sides = [passports(files) for files in (base, ours, theirs)]
    moves = labels(sides)
    state_rel = next((rel for rel in (*ours, *theirs) if rel.endswith("/state.yaml")), None)
    if moves is None or state_rel is None:
        return None
    counters: dict[str, int] = {}
    current: dict[str, str] = {}
    moved = {str(p.get("series")) for side, side_moves in zip(sides, moves, strict=True)
             for label, p in side.items() if label in side_moves}
    for side, side_moves in zip(sides[1:], moves[1:], strict=True):
        for label, p in side.items():
            series, final = str(p.get("series")), side_moves.get(label, label)
            if series in moved and _number(final) > counters.get(series, 0):
                counters[series], current[series] = _number(final), final
    agreed = [({}, {}), (counters, current), (counters, current)]  # the base keeps its own counters
    return [_rewrite(files, side_moves, _state(files.get(state_rel), state_rel, side_moves, *agree))
            for files, side_moves, agree in zip((base, ours, theirs), moves, agreed, strict=True)]


def merge(base: Files, ours: Files, theirs: Files, root: Path | None) -> dict[str, driver.Outcome] | None:
    """Every file of a run's state, stages and passports merged with its concurrent versions
    numbered apart (None where none need it: each file merges alone)."""
    try:
        sides = renumbered(base, ours, theirs)
    except StatedirError:
        return None  # a side cannot be read: the file-by-file merge refuses it
    if sides is None:
        return None
    old, mine, other = sides
    state = next((raw for rel, raw in (*mine.items(), *other.items()) if rel.endswith("/state.yaml")), None)
    merged = {rel: driver.merge_file(rel, old.get(rel), mine.get(rel), other.get(rel), root, state)
              for rel in sorted(mine.keys() | other.keys())}
    return {rel: outcome for rel, outcome in merged.items() if not (outcome.clean and not outcome.data)}

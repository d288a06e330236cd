"""The Stage 5 entry advisories a template declares (`entry_advisories:`): after an integrity
stage's passing verdict, each advisory kind in order, bound to the current draft's version label
and SHA-256 (every kind naming the same draft); they never gate, block or change a verdict. A
newer draft makes them STALE. A `gated` kind (academic-pipeline: claim_audit) is recorded only on
runs with its setting on, and then entering its stage needs one for the current draft whose
report holds none of the classes it refuses. Pure; no kind, stage or class is named here."""
from __future__ import annotations

import re
from typing import Any

from statedir.engine import run_settings
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunDraft, Request, RunData, require_live
from statedir.errors import IllegalTransition, InvalidValue, PrerequisitesMissing
from statedir.hints import HINT, Hint, Placeholder, opt, said

RUN = Placeholder("RUN")

CODE_RE = re.compile(r"^[A-Z0-9][A-Z0-9_]{0,63}$")
CURRENT, STALE = "CURRENT", "STALE"


def declared(t: Template) -> dict[str, Any] | None:
    return t.doc.get("entry_advisories")


def kinds(t: Template) -> list[str]:
    """Every kind the template knows: the ordered ones, then the gated ones."""
    spec = declared(t) or {}
    return [*spec.get("kinds", []), *(spec.get("gated") or {})]


def accepted(t: Template, state: dict[str, Any]) -> list[str]:
    """The kinds a run accepts: the ordered ones, then the gated ones whose setting it was made with."""
    spec = declared(t) or {}
    return [*spec.get("kinds", []), *(kind for kind, gate in (spec.get("gated") or {}).items()
                                      if run_settings.on(t, state, gate["setting"]))]


def _draft(t: Template, run: RunData, spec: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    label = (run.state.get("current_version") or {}).get(spec["draft_series"])
    return label, (run.passports.get(label) or {}) if label else {}


def record(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    """`advisory RUN KIND --file F` or `--unavailable CODE`."""
    spec = declared(t)
    if not spec:
        raise InvalidValue(f"template {t.name} {t.doc.get('version')} declares no Stage 5 entry advisories")
    require_live(t, run.state)
    kind, gated = req.args.get("kind"), dict(spec.get("gated") or {})
    if kind not in kinds(t):
        allowed = accepted(t, run.state)  # a gated kind only where the run has its setting
        raise InvalidValue(f"unknown advisory {kind!r}; use one of {', '.join(allowed)}", kind=kind,
                           allowed=allowed)
    file, code = req.args.get("file") or {}, req.args.get("unavailable")
    if bool(file) == bool(code):
        raise InvalidValue("give the advisory's report ({opt:file} F) or why it is unavailable ({opt:unavailable} CODE), "
                           "one of the two", argument="file")
    if code is not None and not CODE_RE.match(str(code)):
        raise InvalidValue(f"{opt('unavailable')} {code!r} must be a code of capitals, digits and _ (at most 64)",
                           argument="unavailable")
    if kind in gated:
        setting = gated[kind]["setting"]
        if not run_settings.on(t, run.state, setting):
            raise InvalidValue(f"advisory {kind} is recorded only on runs made with the setting {setting} "
                               f"(`{HINT}`); this run's is off", kind=kind, allowed=spec.get("kinds", []),
                               hint=Hint("new", {"run_id": RUN, "setting": f"{setting}=true"}))
        if code is not None:
            raise InvalidValue(f"advisory {kind} takes its report ({opt('file')} F), never {opt('unavailable')}", argument="file")
    after = spec["after"]
    stay = [after, *{g["enters"] for g in gated.values()}]
    if run.state.get("current_stage") not in stay:
        raise IllegalTransition(f"the Stage {t.display(spec['after'])} -> entry advisories are recorded at stage "
                                f"{t.display(after)}'s checkpoint (the current stage is "
                                f"{t.display(run.state['current_stage'])})", stage=run.state.get("current_stage"))
    verdict = run.stages[after].get("verdict")
    label, passport = _draft(t, run, spec)
    if verdict not in spec["passes"] or passport.get("verification_status") != "VERIFIED":
        raise IllegalTransition(f"advisory {kind} comes after stage {t.display(after)}'s "
                                f"{' or '.join(spec['passes'])} on the current draft "
                                f"({_verdict_of(t, run, spec, label, verdict, passport)}); "
                                "a new draft passes integrity again first", kind=kind)
    sha = passport.get("content_hash")
    if not sha:
        raise IllegalTransition(f"the draft {label} has no SHA-256 to bind the advisory to: register it with its "
                                f"file (`{HINT}`)", kind=kind,
                                hint=Hint("material", {"run_id": RUN, "names": Placeholder("..."), "file": Placeholder("F")}))
    draft = RunDraft(run)
    held = dict(draft.state.get("entry_advisories") or {})
    mine = held.get(kind)
    if mine and (mine["version_label"], mine["draft_sha256"]) == (label, sha):
        raise IllegalTransition(f"advisory {kind} is recorded already for the draft {label}; a new draft version "
                                "makes it STALE, then it is recorded again", kind=kind)
    if kind not in gated:
        order = list(spec["kinds"])
        for earlier in order[:order.index(kind)]:
            theirs = held.get(earlier)
            if not theirs or (theirs["version_label"], theirs["draft_sha256"]) != (label, sha):
                named = f" (it names {theirs['version_label']})" if theirs else ""
                raise IllegalTransition(f"advisory {kind} comes after {earlier} for the same draft {label}{named}: "
                                        f"{' then '.join(order)}", kind=kind, expected=earlier)
    entry: dict[str, Any] = {"version_label": label, "draft_sha256": sha, "at": now}
    if code is not None:
        entry.update(status="unavailable", code=f"{spec.get('unavailable_prefix', 'UNAVAILABLE')}:{code}")
    else:
        entry.update(status="recorded", path=file["path"], sha256=file["content_hash"])
    if kind in gated:
        classes = req.args.get("classes")
        if not isinstance(classes, dict) or not classes or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in classes.items()):
            raise InvalidValue(f"the {kind} report names its classes: a mapping `classes: {{CLASS: SEVERITY}}` "
                               "(e.g. classes: {uncited_assertions: LOW-WARN})", argument="file")
        entry.update(classes=dict(classes),
                     refused=sorted(k for k, v in classes.items() if v in gated[kind].get("refuse", [])))
    for later in list(spec["kinds"])[list(spec["kinds"]).index(kind) + 1:] if kind not in gated else []:
        held.pop(later, None)  # a re-recorded earlier kind: the later ones are recorded again after it
    held[kind] = entry
    draft.state["entry_advisories"] = held
    what = entry.get("code") or file.get("content_hash", "")[:12]
    return draft.change(f"advisory {kind} for {label} ({what})", now, kind=kind, version_label=label,
                        **({"refused_classes": entry["refused"]} if kind in gated else {}))


def shown(t: Template, run: RunData) -> list[dict[str, Any]]:
    """Each recorded advisory with its status: CURRENT for the current draft, STALE for an older one."""
    spec = declared(t)
    if not spec:
        return []
    label, passport = _draft(t, run, spec)
    out = []
    for kind, entry in (run.state.get("entry_advisories") or {}).items():
        fresh = (entry["version_label"], entry["draft_sha256"]) == (label, passport.get("content_hash"))
        out.append({"kind": kind, **entry, "binding": CURRENT if fresh else STALE})
    return out


def checked_draft(t: Template, run: RunData, spec: dict[str, Any]) -> tuple[bool, str | None]:
    """Whether the `after` stage's integrity report is registered, and the draft version its latest
    check was on (the report's upstream); none registered where a mid-entry passport stands for it."""
    material = (t.stage(spec["after"]).get("integrity") or {}).get("report_material")
    report = (run.state.get("current_version") or {}).get(t.series_of(material)["name"]) if material else None
    upstream = (run.passports.get(report) or {}).get("upstream_dependencies", []) if report else []
    return report is not None, next((u for u in upstream if t.series_of_label(u) == spec["draft_series"]), None)


def _verdict_of(t: Template, run: RunData, spec: dict[str, Any], label: str | None, verdict: Any,
                passport: dict[str, Any]) -> str:
    """The current draft, its passport's status and the `after` stage's verdict on it, as the
    refusal says them: the stage's last verdict only where that check was on this draft."""
    status = passport.get("verification_status") or "no passport"
    checked, on = checked_draft(t, run, spec)
    if verdict and checked and on != label:
        return (f"{label or 'none'}, {status}, has no stage {t.display(spec['after'])} verdict yet: the last, "
                f"{verdict}, was on {on or 'another draft'}")
    return f"{label or 'none'}: verdict {verdict or 'none'}, {status}"


def require_bound_draft(t: Template, run: RunData, stage_id: str) -> None:
    """Entering the template's `bound_entry` stage after the `after` stage's pass: the current draft
    is the one that pass was on, and every recorded advisory names it (PREREQUISITES_MISSING with
    what to do otherwise: a draft registered since passes integrity again, its advisories again)."""
    spec = declared(t) or {}
    if spec.get("bound_entry") != stage_id or run.stages[spec["after"]].get("verdict") not in spec["passes"]:
        return  # no pass to be bound to (a FAIL-loop resolution lets the run on as it says)
    label, passport = _draft(t, run, spec)
    checked, passed = checked_draft(t, run, spec)
    if not checked:
        return  # entered on a VERIFIED passport that stands for the check: the draft it brought
    stale = [e for e in shown(t, run) if e["kind"] in spec["kinds"] and e["binding"] == STALE]
    after, order = t.display(spec["after"]), " then ".join(spec["kinds"])
    if passed != label:
        need = (f"the draft stage {after}'s {'/'.join(spec['passes'])} verified ({passed or 'none'}), but the "
                f"current draft is {label}, registered since"
                + (f", and the advisories name {stale[0]['version_label']} (STALE)" if stale else "")
                + f"; reopen stage {after} (`{HINT}`), pass integrity on {label}, "
                  f"then record the advisories again ({order})")
        need = said(need, Hint("redo", {"run_id": RUN, "stage": spec["after"], "reason": Placeholder("R")}))
        short = f"stage {after}'s pass on {label}"
    elif stale:
        need = (f"the advisories for the draft it finalizes, {label}: "
                f"{', '.join(e['kind'] for e in stale)} name {stale[0]['version_label']} (STALE); record them "
                f"again ({order}: `{HINT}` or `{opt('unavailable')} CODE`)")
        need = said(need, Hint("advisory", {"run_id": RUN, "kind": Placeholder("KIND"), "file": Placeholder("F")}))
        short = f"advisories for {label}"
    else:
        return
    raise PrerequisitesMissing(f"stage {t.display(stage_id)} needs {need}", prerequisites_met=False,
                               missing_required=[short], missing_recommended=[], warning=None,
                               needs=[need], version_label=label, passed_on=passed,
                               draft_sha256=passport.get("content_hash"))


def require_entry(t: Template, run: RunData, stage_id: str) -> None:
    """Entering `stage_id` where a gated advisory's setting is on: its report for the current draft,
    holding no class it refuses (PREREQUISITES_MISSING naming what is needed); entering the
    `bound_entry` stage, the current draft the one the pass and the advisories were bound to."""
    spec = declared(t)
    require_bound_draft(t, run, stage_id)
    for kind, gate in ((spec or {}).get("gated") or {}).items():
        if gate["enters"] != stage_id or not run_settings.on(t, run.state, gate["setting"]):
            continue
        entry = next((e for e in shown(t, run) if e["kind"] == kind), None)
        if entry is None or entry["binding"] != CURRENT:
            need = said(f"a {kind} result for the current draft (`{HINT}`; the setting {gate['setting']} is on)"
                        + (" - the recorded one is STALE" if entry else ""),
                        Hint("advisory", {"run_id": RUN, "kind": kind, "file": Placeholder("REPORT")}))
        elif entry["refused"]:
            need = (f"a {kind} result without a {'/'.join(gate['refuse'])} class (recorded: "
                    f"{', '.join(entry['refused'])}); revise the draft, pass integrity again and record a new one")
        else:
            continue
        raise PrerequisitesMissing(f"stage {t.display(stage_id)} needs {need}", prerequisites_met=False,
                                   missing_required=[kind], missing_recommended=[], warning=None, needs=[need])

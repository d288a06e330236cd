"""The values a command's argument takes where they form a vocabulary, as data: read from the
templates a store holds (stage ids, statuses, decisions, pipeline states, checkpoint responses,
materials: each the union over the templates, statedir's shipped ones and the store's own), and
from the engine and views for the rest (integrity verdicts, observer checkpoints, adjudication
families, graph formats, the research ledger's statuses). The MCP server's tool schemas take their
enums from these (statedir.mcp.vocabulary)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from statedir.engine import adjudication_contract, template
from statedir.engine.rules import submissions
from statedir.errors import StatedirError
from statedir.research.evidence import ARTIFACT_ROLES, CONFIDENCE, STANCES
from statedir.research.kinds import EXPERIMENT_STATUSES, HYPOTHESIS_STATUSES, RUN_CLOSING_STATUSES, SCREENING
from statedir.views import graph_drawing

SHOW_FORMATS = ("yaml", "json", "ars")  # `show --format` (the CLI checks the same three)
# The research ledger's (statedir.research), taken by its actions' arguments too (the MCP research tools'):
__all__ = ["ARTIFACT_ROLES", "CONFIDENCE", "EXPERIMENT_STATUSES", "HYPOTHESIS_STATUSES", "RUN_CLOSING_STATUSES",
           "SCREENING", "SHOW_FORMATS", "STANCES", "held", "signature", "vocabularies"]

Templates = list[template.Template]


def held(root: Path) -> Templates:
    """The templates the store at `root` can run: statedir's shipped ones and the store's own
    (an unreadable one of the store's is left out: `validate` reports it)."""
    found = [template.load(name) for name in template.shipped()]
    folder = root / "templates"
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            found.append(template.load(str(path)))
        except StatedirError:
            continue
    return found


def signature(root: Path) -> tuple[tuple[str, int], ...]:
    """What changes when the store's own templates do (names and modification times)."""
    folder = root / "templates"
    if not folder.is_dir():
        return ()
    return tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.yaml")))


def _union(ts: Templates, values: Callable[[template.Template], Iterable[str]]) -> list[str]:
    return list(dict.fromkeys(str(v) for t in ts for v in values(t)))


def _stages(t: template.Template) -> list[str]:
    """A template's stage ids, one spelling each: an alias (3' for 3p) is taken as input, not offered."""
    return list(t.stage_ids)


def _integrity_stages(t: template.Template) -> list[str]:
    return [s["id"] for s in t.stages if "integrity" in s]


def _settable_states(t: template.Template) -> list[str]:
    """The pipeline states `pipeline` may set: the rest are statedir's to set as stages move."""
    return [t.pipeline[role] for role in ("paused", "running", "aborted", "completed")]


def _decisions(t: template.Template) -> list[str]:
    return [v for s in t.stages for v in s.get("decision", {}).get("values", [])]


def _series(t: template.Template) -> list[str]:
    return [*(s["name"] for s in t.series), *t.materials]


def vocabularies(ts: Templates) -> dict[str, tuple[list[str], bool]]:
    """Every vocabulary by name: its values, and whether they come from the templates (a union)."""
    of_templates: dict[str, Callable[[template.Template], Iterable[str]]] = {
        "stage": _stages, "integrity_stage": _integrity_stages,
        "observed_stage": lambda t: [*_stages(t), "pipeline"],
        "status": lambda t: t.statuses, "decision": _decisions, "pipeline_state": _settable_states,
        "response": lambda t: t.checkpoints.get("responses", []),
        "next": lambda t: [*_stages(t), t.pipeline["completed"], t.pipeline["aborted"]],
        "entry_point": lambda t: t.entry_points(), "material": lambda t: t.materials, "series": _series,
        "fail_loop_decision": lambda t: (t.doc.get("fail_loop") or {}).get("decisions", []),
        "checklist_stage": lambda t: [t.display(s) for s in (t.doc.get("failure_modes") or {}).get("stages", [])],
        "failure_mode": lambda t: [str(m["id"]) for m in (t.doc.get("failure_modes") or {}).get("modes", [])],
        "failure_mode_answer": lambda t: list((t.doc.get("failure_modes") or {}).get("answers", {})),
        "checkpoint_decision": lambda t: [str(o) for d in (t.doc.get("checkpoint_decisions") or {}).values()
                                          if not d.get("decides") for o in d["options"]],
        "checkpoint_pick": lambda t: [str(o) for d in (t.doc.get("checkpoint_decisions") or {}).values()
                                      if d.get("decides") for o in d["options"]],
        "quality": lambda t: (t.checkpoints.get("dashboard") or {}).get("quality", []),
    }
    fixed = {"verdict": submissions.VERDICTS, "observer_checkpoint": submissions.OBSERVER_CHECKPOINTS,
             "family": adjudication_contract.FAMILY_NAMES,
             "role": [r for f in adjudication_contract.FAMILIES for r in f.roles],
             "unavailable": adjudication_contract.UNAVAILABLE_REASONS,
             "graph_format": graph_drawing.FORMATS, "show_format": SHOW_FORMATS,
             "research_status": list(dict.fromkeys([*RUN_CLOSING_STATUSES, *HYPOTHESIS_STATUSES,
                                                    *EXPERIMENT_STATUSES])),
             "stance": STANCES, "confidence": CONFIDENCE, "screening": SCREENING}
    out = {name: (_union(ts, values), True) for name, values in of_templates.items()}
    out.update({name: (list(values), False) for name, values in fixed.items()})
    return out

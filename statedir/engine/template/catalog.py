"""The templates a store can use: listed, and one described by its own vocabulary (stages,
statuses, pipeline states, actions), so help never has to name one template's words."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.engine import template


def listed(store_templates: Path | None) -> list[dict[str, Any]]:
    """Every template: shipped ones, then the store's (`<name>@<version>`: an older version kept for its runs)."""
    def row(name: str, source: str, t: template.Template) -> dict[str, Any]:
        return {"name": name, "version": t.doc.get("version"), "source": source, "title": t.doc.get("title")}

    rows = [row(name, "shipped", template.load(name)) for name in template.shipped()]
    held = sorted(store_templates.glob("*.yaml")) if store_templates is not None and store_templates.is_dir() else []
    for path in held:
        name, kept, _ = path.stem.partition("@")
        rows.append(row(name, "store (kept for its runs)" if kept else "store", template.load(str(path))))
    return rows


def describe(t: template.Template) -> dict[str, Any]:
    """One template's vocabulary as data: what `statedir templates NAME` shows."""
    labels = t.doc["statuses"].get("labels", {})
    markers = t.doc["statuses"].get("markers", {})
    stages = []
    for spec in t.stages:
        sid = spec["id"]
        stages.append({
            "id": sid, "display": t.display(sid), "name": spec.get("label", spec["name"]),
            "owner": t.owner(sid), "skippable": t.skippable(sid), "checkpoint": spec.get("checkpoint"),
            "decisions": spec.get("decision", {}).get("values", []), "integrity": "integrity" in spec,
            "produces": spec.get("produces", []),
            "requires": [r if isinstance(r, str) else r.get("label") or " or ".join(r.get("any_of", []))
                         for r in spec.get("prerequisites", {}).get("required", [])],
            "recommends": [r if isinstance(r, str) else f"{r['material']} (after stage {t.display(r['after'])})"
                           for r in spec.get("prerequisites", {}).get("recommended", [])],
            "next": [e["to"] for e in t.edges_from(sid)],
        })
    return {
        "name": t.name, "version": t.doc.get("version"), "title": t.doc.get("title"),
        "description": t.doc.get("description"), "source": t.source,
        "required_run_fields": t.required_run_fields,
        "stages": stages, "entry_points": t.entry_points(), "aliases": t.doc.get("aliases", {}),
        "statuses": [{"value": v, "label": labels.get(v), "marker": markers.get(v),
                      "role": next((r for r, value in t.status.items() if value == v), None),
                      "moves_to": t.moves.get(v, [])} for v in t.statuses],
        "pipeline_states": dict(t.pipeline),
        "actions": {actor: role.get("may", []) for actor, role in t.roles.items()},
        "owner_may": t.doc.get("owner_may", []), "default_actor": t.default_actor(),
        "materials": list(t.materials),
        "series": [{"name": x["name"], "label": x["label"], "materials": list(x["materials"])} for x in t.series],
        "checkpoint_responses": t.checkpoints.get("responses", []),
    }


def render(info: dict[str, Any]) -> str:
    """The description for people: short, aligned."""
    head = f"{info['name']} {info['version'] or ''}".rstrip() + (f" - {info['title']}" if info["title"] else "")
    lines = [head]
    if info["description"]:
        lines.append(f"  {info['description']}")
    lines.append(f"  run fields `new` needs: {', '.join(info['required_run_fields']) or 'none'}")
    width = max(len(s["display"]) for s in info["stages"])
    skips = any(s["role"] == "skipped" for s in info["statuses"])  # "never skipped" means something
    lines.append("stages (in order; entry points marked >):")
    for s in info["stages"]:
        notes = [f"owner {s['owner']}" if s["owner"] else "",
                 f"checkpoint {s['checkpoint']}" if s["checkpoint"] else "",
                 f"--decision {'|'.join(s['decisions'])}" if s["decisions"] else "",
                 "integrity stage" if s["integrity"] else "",
                 "never skipped" if not s["skippable"] and skips else "",
                 f"needs {', '.join(s['requires'])}" if s["requires"] else "",
                 f"-> {', '.join(s['next'])}" if s["next"] else ""]
        mark = ">" if s["id"] in info["entry_points"] else " "
        lines.append(f"  {mark} {s['display'].ljust(width)}  {s['name']}" + "".join(f"; {n}" for n in notes if n))
    lines.append("statuses (status -> where `statedir stage` may move it):")
    for s in info["statuses"]:
        role = f" ({s['role']})" if s["role"] else ""
        lines.append(f"  {s['value']}{role}" + (f" -> {', '.join(s['moves_to'])}" if s["moves_to"] else ""))
    lines.append("pipeline states: " + ", ".join(dict.fromkeys(info["pipeline_states"].values())))
    lines.append("checkpoint responses (`confirm --response`): " + (", ".join(info["checkpoint_responses"]) or "none"))
    lines.append(f"actors and their actions (default actor {info['default_actor']}):")
    for actor, actions in info["actions"].items():
        lines.append(f"  {actor}: {' '.join(actions)}")
    if info["materials"]:
        lines.append("materials: " + ", ".join(info["materials"]))
    if info["series"]:
        lines.append("version series (one `statedir material` call names materials of one series: one version):")
        lines.extend(f"  {x['label']}: {', '.join(x['materials'])}" for x in info["series"])
    return "\n".join(lines)

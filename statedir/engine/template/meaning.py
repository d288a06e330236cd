"""What a template means, checked beyond its shape: every name it uses is one it declares,
every role may only do actions statedir has, and every stage can reach the end. Each problem
comes with its JSON path, so the caller can name the line it is on."""
from __future__ import annotations

from typing import Any

from statedir.engine.failure_modes_meaning import meaning

# Every action a role's `may` (or `owner_may`) can grant: the mutating commands.
ACTIONS = ("new", "stage", "output", "pipeline", "set", "material", "integrity", "revision", "loop", "observe",
           "confirm", "redo", "resume", "bind", "seal", "rollback", "resolve", "checklist", "acknowledge_mode", "contract",
           "advisory", "compliance", "compliance_override", "inquiry")
Found = list[tuple[list[Any], str]]


def json_path(path: list[Any]) -> str:
    """`["stages", 3, "produces"]` -> `$.stages[3].produces`."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def problems(doc: dict[str, Any]) -> Found:
    """Every meaning problem of a template that already has the schema's shape."""
    return _references(doc) + _roles(doc) + _produces(doc) + _logs(doc) + _reachability(doc) + meaning(doc)


def _references(doc: dict[str, Any]) -> list[tuple[list[Any], str]]:
    """Cross-references between the template's own lists."""
    out: list[tuple[list[Any], str]] = []
    ids = [s["id"] for s in doc["stages"]]
    for i, stage_id in enumerate(ids):
        if ids.index(stage_id) != i:
            out.append((["stages", i, "id"], f"duplicate stage id {stage_id!r}"))
    statuses = doc["statuses"]["values"]
    for role, value in doc["statuses"]["roles"].items():
        if value not in statuses:
            out.append((["statuses", "roles", role], f"{value!r} is not one of statuses.values"))
    for src, targets in doc["statuses"]["moves"].items():
        for value in [src, *targets]:
            if value not in statuses:
                out.append((["statuses", "moves", src], f"{value!r} is not one of statuses.values"))
    ends = {doc["pipeline_states"]["completed"], doc["pipeline_states"]["aborted"]}
    for i, edge in enumerate(doc["graph"]):
        if edge["from"] not in ids:
            out.append((["graph", i, "from"], f"unknown stage {edge['from']!r}"))
        if edge["to"] not in ids and edge["to"] not in ends:
            out.append((["graph", i, "to"], f"unknown stage or end state {edge['to']!r}"))
        for key in ("skip", "reset"):
            for j, stage_id in enumerate(edge.get(key, [])):
                if stage_id not in ids:
                    out.append((["graph", i, key, j], f"unknown stage {stage_id!r}"))
    for alias, target in doc.get("aliases", {}).items():
        if target not in ids:
            out.append((["aliases", alias], f"alias of unknown stage {target!r}"))
    for i, stage_id in enumerate(doc.get("entry_points", [])):
        if stage_id not in ids:
            out.append((["entry_points", i], f"unknown stage {stage_id!r}"))
    materials = set(doc.get("materials", []))
    for stage_id, names in ((doc.get("mid_entry") or {}).get("registers") or {}).items():
        if stage_id not in doc.get("entry_points", ids[:1]):
            out.append((["mid_entry", "registers", stage_id], f"{stage_id!r} is not an entry point"))
        for j, name in enumerate(names):
            if name not in materials:
                out.append((["mid_entry", "registers", stage_id, j], f"unknown material {name!r}"))
    for i, series in enumerate(doc.get("series", [])):
        for name in series["materials"]:
            if name not in materials:
                out.append((["series", i, "materials"], f"unknown material {name!r}"))
    for i, stage in enumerate(doc["stages"]):
        prereq = stage.get("prerequisites", {})
        for req in prereq.get("required", []):
            for name in [req] if isinstance(req, str) else req.get("any_of", []):
                if name not in materials:
                    out.append((["stages", i, "prerequisites"], f"unknown material {name!r}"))
        for item in prereq.get("recommended", []):
            name = item if isinstance(item, str) else item["material"]
            if name not in materials:
                out.append((["stages", i, "prerequisites"], f"unknown material {name!r}"))
            if isinstance(item, dict) and item["after"] not in ids:
                out.append((["stages", i, "prerequisites"], f"recommended after unknown stage {item['after']!r}"))
    return out


def _roles(doc: dict[str, Any]) -> Found:
    out: Found = []
    roles = doc.get("roles", {})
    for role, spec in roles.items():
        for i, action in enumerate(spec.get("may", [])):
            if action not in ACTIONS:
                out.append((["roles", role, "may", i], f"role {role} may {action!r}, which is no statedir action "
                                                       f"({', '.join(ACTIONS)})"))
    for i, action in enumerate(doc.get("owner_may", [])):
        if action not in ACTIONS:
            out.append((["owner_may", i], f"{action!r} is no statedir action ({', '.join(ACTIONS)})"))
    actor = doc.get("default_actor")
    if actor is not None and actor not in roles:
        out.append((["default_actor"], f"default_actor {actor!r} is not one of the roles ({', '.join(roles)})"))
    return out


# The logs an action writes (besides statedir's own transitions and reset_boundary), and why.
WRITES = {"stage": (("checkpoints", "completing a stage opens a checkpoint"),),
          "confirm": (("checkpoints", "confirm answers a checkpoint"),
                      ("schema_validation", "confirm records the schema check of the move")),
          "integrity": (("integrity", "integrity records each round"),),
          "resolve": (("integrity", "resolve records the user's FAIL-loop resolution"),),
          "revision": (("revisions", "revision records each round"),),
          "observe": (("collaboration_depth", "observe records each report"),),
          "inquiry": (("inquiry_ledger", "inquiry records each branch note"),),
          "checklist": (("failure_modes", "checklist records each failure-mode checklist"),),
          "acknowledge_mode": (("failure_modes", "acknowledge records the user's answer to a blocking mode"),)}


def _logs(doc: dict[str, Any]) -> Found:
    """A template may leave logs out, but never one an action its roles may take writes: that
    action would be refused for good, leaving the run stuck."""
    if "logs" not in doc:
        return []  # every log
    declared = set(doc["logs"])
    granted = {a for spec in doc.get("roles", {}).values() for a in spec.get("may", [])} | set(doc.get("owner_may", []))
    out: Found = []
    for action in ACTIONS:
        for log, why in WRITES.get(action, ()) if action in granted else ():
            if log not in declared and not any(p == ["logs"] and log in m for p, m in out):
                out.append((["logs"], f"`logs` leaves out {log}, which a role may write ({why}); add {log} to `logs` "
                                      "or the runs of this template would be stuck there"))
    return out


def _produces(doc: dict[str, Any]) -> Found:
    known = set(doc.get("materials", [])) | {s["name"] for s in doc.get("series", [])}
    out: Found = []
    for i, stage in enumerate(doc["stages"]):
        for j, name in enumerate(stage.get("produces", [])):
            if name not in known:
                out.append((["stages", i, "produces", j], f"stage {stage['id']} produces {name!r}, which is neither "
                                                          "a material nor a version series of this template"))
    return out


def _reachability(doc: dict[str, Any]) -> Found:
    """From every entry point, each stage reached can still reach `completed`: no run gets
    stuck at a stage nothing follows."""
    ids = [s["id"] for s in doc["stages"]]
    done = doc["pipeline_states"]["completed"]
    edges: dict[str, list[str]] = {sid: [] for sid in ids}
    for edge in doc["graph"]:
        edges.setdefault(edge["from"], []).append(edge["to"])
    finishing = {done}
    changed = True
    while changed:  # the stages from which `completed` can be reached
        changed = False
        for sid in ids:
            if sid not in finishing and any(to in finishing for to in edges.get(sid, [])):
                finishing.add(sid)
                changed = True
    reached, todo = set(), list(doc.get("entry_points", ids[:1]))
    while todo:
        sid = todo.pop()
        if sid in reached or sid not in edges:
            continue
        reached.add(sid)
        todo += edges[sid]
    stuck = [sid for sid in ids if sid in reached and sid not in finishing]
    dead_ends = [sid for sid in stuck if not edges[sid]]  # the cause, where there is one
    out: Found = []
    for i, sid in enumerate(ids):
        if sid in (dead_ends or stuck):
            what = "nothing follows it in the graph" if not edges[sid] else "every path from it loops back"
            out.append((["stages", i, "id"], f"a run at stage {sid} can never reach {done}: {what}"))
    return out

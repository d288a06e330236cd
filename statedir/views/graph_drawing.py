"""Drawing a template's stage graph as Mermaid or Graphviz DOT text: conditions on the edges,
MANDATORY checkpoints marked, and for a run where it stands (done, current, skipped)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.transition_data import RunData

FORMATS = ("mermaid", "dot")
# Fill colours of a run's stages by where they stand; the current stage also gets a thick border.
COLOURS = {"done": "#d4edda", "current": "#fff3cd", "skipped": "#eeeeee", "blocked": "#f8d7da"}


@dataclass(frozen=True)
class Node:
    key: str  # a stage id or a terminal pipeline state
    label: str
    mandatory: bool
    terminal: bool
    standing: str | None  # done, current, skipped, blocked or None (pending / no run)


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str


def _standing(t: Template, run: RunData | None, key: str) -> str | None:
    if run is None:
        return None
    state = run.state
    if key in t.terminal_targets:
        return "current" if state.get("pipeline_state") == key else None
    status = run.stages.get(key, {}).get("status")
    for standing in ("done", "skipped", "blocked"):  # a finished current stage (checkpoint open) is done
        if t.status.get(standing) is not None and status == t.status[standing]:
            return standing
    if key == state.get("current_stage") and state.get("pipeline_state") not in t.terminal_targets:
        return "current"
    return None


def layout(t: Template, run: RunData | None = None) -> tuple[list[Node], list[Edge]]:
    """The graph as plain data: one node per stage (then the end states edges lead to)."""
    nodes = []
    for stage_id in t.stage_ids:
        spec = t.stage(stage_id)
        mandatory = spec.get("checkpoint") == "MANDATORY"
        label = f"{t.display(stage_id)} {spec.get('label', spec['name'])}"
        nodes.append(Node(stage_id, label, mandatory, False, _standing(t, run, stage_id)))
    ends = sorted({e["to"] for e in t.graph if e["to"] in t.terminal_targets})
    nodes += [Node(end, end, False, True, _standing(t, run, end)) for end in ends]
    edges = []
    for edge in t.graph:
        parts = [template_conditions.describe(edge["when"])] if edge.get("when") else []
        if edge.get("default"):
            parts.append("default")
        for key, verb in (("skip", "skips"), ("reset", "redoes")):
            if edge.get(key):
                parts.append(f"{verb} {', '.join(t.display(s) for s in edge[key])}")
        edges.append(Edge(edge["from"], edge["to"], "; ".join(parts)))
    return nodes, edges


def _mermaid_id(key: str) -> str:
    return "s_" + re.sub(r"[^A-Za-z0-9]", "_", key)


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;")


def mermaid(t: Template, run: RunData | None = None) -> str:
    """A Mermaid flowchart (GitHub and most editors render it in Markdown)."""
    nodes, edges = layout(t, run)
    lines = ["flowchart TD"]
    for node in nodes:
        label = _mermaid_text(node.label + ("<br/>MANDATORY checkpoint" if node.mandatory else ""))
        shape = ('(["', '"])') if node.terminal else ('[["', '"]]') if node.mandatory else ('["', '"]')
        lines.append(f"    {_mermaid_id(node.key)}{shape[0]}{label}{shape[1]}")
    for edge in edges:
        arrow = f'-->|"{_mermaid_text(edge.label)}"|' if edge.label else "-->"
        lines.append(f"    {_mermaid_id(edge.source)} {arrow} {_mermaid_id(edge.target)}")
    standing = [(n, n.standing) for n in nodes if n.standing is not None]
    for name in dict.fromkeys(name for _, name in standing):
        extra = ",stroke-width:3px" if name == "current" else ",stroke-dasharray:4" if name == "skipped" else ""
        lines.append(f"    classDef {name} fill:{COLOURS[name]}{extra}")
    for node, name in standing:
        lines.append(f"    class {_mermaid_id(node.key)} {name}")
    return "\n".join(lines) + "\n"


def _dot_text(*lines: str) -> str:
    """A DOT string; several lines are joined by DOT's own line break."""
    return '"' + "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines) + '"'


def dot(t: Template, run: RunData | None = None) -> str:
    """A Graphviz digraph (`dot -Tsvg`)."""
    nodes, edges = layout(t, run)
    lines = [f"digraph {_dot_text(t.name)} {{", "    node [shape=box, fontname=Helvetica];"]
    for node in nodes:
        attrs = [f"label={_dot_text(node.label, *(['MANDATORY checkpoint'] if node.mandatory else []))}"]
        if node.mandatory:
            attrs.append("peripheries=2")
        if node.terminal:
            attrs.append("shape=ellipse")
        if node.standing:
            style = "filled,dashed" if node.standing == "skipped" else "filled"
            attrs += [f'style="{style}"', f'fillcolor="{COLOURS[node.standing]}"']
            if node.standing == "current":
                attrs.append("penwidth=3")
        lines.append(f"    {_dot_text(node.key)} [{', '.join(attrs)}];")
    for edge in edges:
        label = f" [label={_dot_text(edge.label)}]" if edge.label else ""
        lines.append(f"    {_dot_text(edge.source)} -> {_dot_text(edge.target)}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(t: Template, run: RunData | None = None, fmt: str = "mermaid") -> str:
    return mermaid(t, run) if fmt == "mermaid" else dot(t, run)

"""The stage graph as an SVG picture: the nodes and edges `statedir graph` describes
(statedir.api.graph_layout), one stage under the other, forward jumps arcing on the
right and the ways back on the left. Only presentation attributes and classes: the page's
Content-Security-Policy allows no inline style."""
from __future__ import annotations

import re
from html import escape
from typing import Any

from statedir.api.graph_layout import Edge, laid_out

ROW, BOX_W, BOX_H = 60, 270, 44
LABEL_CHARS, CHAR_PX = 52, 6  # an edge label's most characters (the whole one is its title), and their width at 11 px
STANDING_TEXT = {"done": "done", "current": "current", "skipped": "skipped", "blocked": "blocked"}


def draw(t: Any, run: Any | None = None) -> str:
    """The SVG text of the template's graph, marked with where `run` stands."""
    nodes, edges = laid_out(t, run)
    edges = _merged(edges)
    row = {node.key: i for i, node in enumerate(nodes)}
    back = sum(1 for e in edges if e.source in row and e.target in row and row[e.target] <= row[e.source])
    ahead = sum(1 for e in edges if e.source in row and e.target in row and row[e.target] > row[e.source] + 1)
    def px(label: str) -> int:
        return len(_short(label, LABEL_CHARS)) * CHAR_PX + 8

    back_labels = [e.label for e in edges if e.label and e.source in row and e.target in row
                   and row[e.target] <= row[e.source]]
    left = 40 + 28 * back + max(map(px, back_labels), default=0)  # the ways back arc on the left, labelled
    height = len(nodes) * ROW + 20
    width = left + BOX_W + 28 * ahead + 40  # widened below to the farthest label
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="stage-graph" role="img" viewBox="0 0 WIDTH {height}" '
             f'width="WIDTH" height="{height}" aria-labelledby="graph-title">',
             f'<title id="graph-title">Stage graph of {escape(t.name)}</title>',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    spans: dict[str, int] = {"right": 0, "left": 0}
    for edge in edges:
        if edge.source not in row or edge.target not in row:
            continue
        a, b = row[edge.source], row[edge.target]
        y1, y2 = a * ROW + 10 + BOX_H, b * ROW + 10
        label, shown = escape(edge.label), escape(_short(edge.label, LABEL_CHARS))
        if b == a + 1:
            x = left + BOX_W // 2
            parts.append(f'<path class="edge" d="M{x},{y1} L{x},{y2}" marker-end="url(#arrow)">'
                         f'<title>{label or "next"}</title></path>')
            if label:
                parts.append(f'<text class="edge-label" x="{x + 6}" y="{(y1 + y2) // 2 + 4}">{shown}</text>')
                width = max(width, x + 6 + px(edge.label))
            continue
        side = "right" if b > a else "left"
        spans[side] += 1
        reach = 18 + 14 * spans[side]
        ya, yb = a * ROW + 10 + BOX_H // 2, b * ROW + 10 + BOX_H // 2
        # A curve's farthest point (t = 1/2) lies 3/4 of the way to its control points: the label sits beside it.
        if side == "right":
            x0 = left + BOX_W
            d = f"M{x0},{ya} C{x0 + reach * 2},{ya} {x0 + reach * 2},{yb} {x0},{yb}"
            tx, anchor = x0 + reach * 3 // 2 + 4, "start"
        else:
            x0 = left
            d = f"M{x0},{ya} C{x0 - reach * 2},{ya} {x0 - reach * 2},{yb} {x0},{yb}"
            tx, anchor = x0 - reach * 3 // 2 - 4, "end"
        title = f"{escape(edge.source)} to {escape(edge.target)}" + (f": {label}" if label else "")
        parts.append(f'<path class="edge edge-{side}" d="{d}" fill="none" marker-end="url(#arrow)">'
                     f'<title>{title}</title></path>')
        if label:
            parts.append(f'<text class="edge-label" x="{tx}" y="{(ya + yb) // 2 + 4}" text-anchor="{anchor}">'
                         f'{shown}</text>')
            if side == "right":
                width = max(width, tx + px(edge.label))
    for node in nodes:
        y = row[node.key] * ROW + 10
        classes = ["node", f"node-{node.standing or 'pending'}"] + (["mandatory"] if node.mandatory else [])
        classes += ["terminal"] if node.terminal else []
        radius = BOX_H // 2 if node.terminal else 4
        state = STANDING_TEXT.get(node.standing or "", "pending")
        title = f"{node.label}: {state}" + (", MANDATORY checkpoint" if node.mandatory else "")
        parts.append(f'<g class="{" ".join(classes)}" data-key="{escape(node.key)}"><title>{escape(title)}</title>'
                     f'<rect x="{left}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="{radius}"/>')
        if node.mandatory:
            parts.append(f'<rect class="mandatory-ring" x="{left + 3}" y="{y + 3}" width="{BOX_W - 6}" '
                         f'height="{BOX_H - 6}" rx="3" fill="none"/>')
        parts.append(f'<text x="{left + 10}" y="{y + 19}">{escape(_short(node.label, 32))}</text>')
        if node.mandatory:
            parts.append(f'<text class="mandatory-text" x="{left + 10}" y="{y + 35}">MANDATORY checkpoint</text>')
        if node.standing:
            parts.append(f'<text class="standing" x="{left + BOX_W - 8}" y="{y + 35}" text-anchor="end">{state}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    parts[0] = parts[0].replace("WIDTH", str(width))
    return "".join(parts)


def _merged(edges: list[Edge]) -> list[Edge]:
    """One edge per pair of stages: two conditions leading the same way are one arrow with one
    label ("decision in a, b"), not two labels drawn over each other."""
    by_pair: dict[tuple[str, str], list[str]] = {}
    for edge in edges:
        labels = by_pair.setdefault((edge.source, edge.target), [])
        if edge.label not in labels:
            labels.append(edge.label)
    return [Edge(source, target, _joined([label for label in labels if label]))
            for (source, target), labels in by_pair.items()]


def _joined(labels: list[str]) -> str:
    """`decision in a; skips x` and `decision in b; skips x` read `decision in a, b; skips x`."""
    parts = [re.fullmatch(r"(\w+) in ([\w.'-]+(?:, [\w.'-]+)*)(; .*)?", label) for label in labels]
    if len(labels) > 1 and all(parts) and len({(m[1], m[3]) for m in parts if m}) == 1:
        first = parts[0]
        assert first is not None
        return f"{first[1]} in {', '.join(m[2] for m in parts if m)}{first[3] or ''}"
    return " or ".join(labels)


def _short(text: str, most: int = 30) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"

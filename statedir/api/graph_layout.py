"""The stage graph as plain data, for an entry point that draws it itself (the web view's SVG,
statedir.web.stage_svg): one node per stage (then the end states edges lead to), each marked with
where a run stands, and the edges between them with their conditions (statedir.views.graph_drawing,
which draws `statedir graph`'s Mermaid and DOT from the same)."""
from __future__ import annotations

from typing import Any

from statedir.views.graph_drawing import Edge, Node, layout

__all__ = ["Edge", "Node", "laid_out"]


def laid_out(t: Any, run: Any | None = None) -> tuple[list[Node], list[Edge]]:
    """Template `t`'s stage graph (as the API loaded it), marked with where `run` stands (if given)."""
    return layout(t, run)

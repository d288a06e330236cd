"""The stage graph as data for an entry point that draws it (statedir/api/graph_layout.py): a node
per stage, then the end states, marked with where a run stands; the edges between them."""
from __future__ import annotations

from statedir import api
from statedir.api.graph_layout import laid_out


def test_the_graph_is_a_node_per_stage_marked_where_the_run_stands(sd: api.StateDir) -> None:
    sd.new("r", topic="T", template="linear")
    t, run, _ = sd.load("r")
    nodes, edges = laid_out(t)
    assert [n.key for n in nodes if not n.terminal] == ["plan", "build", "check", "deliver"]
    assert {n.standing for n in nodes} == {None}  # no run: nothing marked
    assert ("plan", "build") in {(e.source, e.target) for e in edges}
    marked = {n.key: n.standing for n in laid_out(t, run)[0]}
    assert marked["plan"] == "current" and marked["build"] is None

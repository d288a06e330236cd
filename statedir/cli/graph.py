"""`statedir graph`: the stage graph of a template, or of a run with where it stands."""
from __future__ import annotations

from typing import Annotated, Optional

from statedir.cli.common import JsonOpt, StoreOpt
from statedir.cli.registry import app
from statedir.commands.params import Argument, Option


@app.command()
def graph(run_id: Annotated[Optional[str], Argument(help="Draw this run: done, current and skipped stages marked.", show_default=False)] = None,
          template: Annotated[Optional[str], Option("--template", help="Draw this template instead of a run (name or file).")] = None,
          format: Annotated[str, Option("--format", help="mermaid (renders in GitHub Markdown) or dot (Graphviz).")] = "mermaid",
          store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Draw the stage graph: conditions on the edges, MANDATORY checkpoints marked."""
    from statedir.cli.render import emit_json
    from statedir.engine import template as template_mod
    from statedir.errors import InvalidValue, NotAStore
    from statedir.views import graph_drawing

    if format not in graph_drawing.FORMATS:
        raise InvalidValue(f"--format takes {' or '.join(graph_drawing.FORMATS)}, not {format!r}")
    if (run_id is None) == (template is None):
        raise InvalidValue("name a run or pass --template NAME (one of the two)")
    run = None
    if run_id is not None:
        from statedir.cli.common import open_store

        t, run, _ = open_store(store).load(run_id)
    else:
        from statedir.cli.common import store_path

        try:
            held = store_path(store) / "templates"
        except NotAStore:
            held = None
        t = template_mod.load(template or "", held)
    text = graph_drawing.draw(t, run, format)
    if json:
        emit_json({"run_id": run_id, "template": t.name, "format": format, "graph": text})
    else:
        print(text, end="")

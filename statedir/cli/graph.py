"""`statedir graph`: the stage graph of a template, or of a run with where it stands."""
# Lazy imports: api.documents, cli.common, cli.render, errors: imported by the command that uses them: `statedir
#   COMMAND` loads this module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

from pathlib import Path
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
    from statedir.api.documents import graph_of
    from statedir.cli.common import open_store, store_path
    from statedir.cli.render import emit_json
    from statedir.errors import NotAStore

    def held() -> Optional[Path]:
        try:
            return store_path(store) / "templates"
        except NotAStore:
            return None

    drawn = graph_of(lambda run: open_store(store).load(run), held, run_id=run_id, template=template, format=format)
    text = drawn["graph"]
    if json:
        emit_json(drawn)
    else:
        print(text, end="")

"""`statedir serve`: the read-only web view (statedir.web, loaded only here)."""
# Lazy imports: errors, web.serve: imported by the command that uses them: `statedir COMMAND` loads this module for
#   any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

from typing import Annotated, Optional

from statedir.cli.common import JsonOpt, StoreOpt, store_path
from statedir.cli.registry import app
from statedir.commands.params import Option


@app.command()
def serve(port: Annotated[int, Option("--port", min=0, max=65535, help="The port; 0 picks a free one.")] = 8765,
          open_browser: Annotated[bool, Option("--open", help="Open the view in the default browser.")] = False,
          host: Annotated[str, Option("--host", help="Listen here instead of 127.0.0.1; an address beyond loopback needs --token.")] = "127.0.0.1",
          token: Annotated[Optional[str], Option("--token", envvar="STATEDIR_SERVE_TOKEN", show_envvar=True, help="A secret (16+ characters) every request must carry: the printed address holds it once, a cookie after.")] = None,
          answer: Annotated[bool, Option("--answer", help="Let the run pages answer an open checkpoint or a FAIL-loop resolution, recorded as yours (channel web); off: read-only.")] = False,
          store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Serve a read-only web view of the store: runs, a run's dashboard and stage graph, history with
    diffs, bus sessions, the research ledger; live as transitions land (needs the web extra: `pip install -e '.[web]'` in a clone).

    It prints its address first (with --json: {"url": ...} on one line), then serves until Ctrl-C.
    With --answer a run's page also answers its open checkpoint or FAIL-loop resolution as the
    user's answer (POST from the same origin, with a per-session CSRF token).
    """
    from statedir.errors import MissingDependency

    root = store_path(store)
    try:
        from statedir.web import serve as serve_mod
    except ImportError as exc:
        raise MissingDependency(f"the web view's libraries are not installed ({exc.name}): "
                                "pip install 'statedir[web]' (from a clone of statedir's repository: "
                                "pip install -e '.[web]')", missing=exc.name) from None
    from statedir.cli.words import CLI

    # The page's reader is a person in a browser who started this server from a shell: a refusal's
    # next step is said as the command line they would type there (`statedir doctor --fix`), not as
    # Python (they hold no StateDir) nor as an MCP tool call (no agent reads the page).
    serve_mod.serve(root, host=host, port=port, token=token, open_browser=open_browser, as_json=json,
                    answer=answer, words=CLI)

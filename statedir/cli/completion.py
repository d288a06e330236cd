"""Shell completion of run ids, stage ids and statuses: read from the store's folder names and the
compiled schemas its files point at, never through git, so a tab press stays instant."""
# Lazy imports: api.places, errors: imported by the command that uses them: `statedir COMMAND` loads this module for
#   any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

_MODELINE = re.compile(r"\$schema=(\S+)")


def _store(ctx: Any) -> Path | None:
    """The store a completion reads: --store / STATEDIR_STORE (a repository root means its
    state/), else the nearest one at or above the current directory, as every command finds it."""
    from statedir.errors import StatedirError
    from statedir.api.places import store_at

    given = (ctx.params.get("store") if ctx is not None else None) or os.environ.get("STATEDIR_STORE")
    try:
        return store_at(Path(given) if given else None)
    except StatedirError:
        return None


def _run_dir(ctx: Any) -> Path | None:
    store, run_id = _store(ctx), ctx.params.get("run_id") if ctx is not None else None
    return store / "runs" / run_id if store is not None and isinstance(run_id, str) and run_id else None


def _schema_enum(file: Path, field: str, keyword: str = "enum", kind: str | None = None) -> list[str]:
    """The values the schema named by `file`'s first line allows for `field` (a compiled template
    schema; `keyword`: another list of the field's, such as x-requestable; `kind`: the schema of
    that kind beside it, such as `stage` beside a state.yaml's run-state)."""
    try:
        with file.open(encoding="utf-8") as handle:
            found = _MODELINE.search(handle.readline())
        named = found[1] if found else None
        if named and kind:
            named = f"{named.rpartition('/')[0]}/{kind}.schema.json".lstrip("/")
        schema = json.loads((file.parent / named).read_text()) if named else {}
    except (OSError, ValueError):
        return []
    values = schema.get("properties", {}).get(field, {}).get(keyword, [])
    return [v for v in values if isinstance(v, str)]


def run_ids(ctx: Any, incomplete: str) -> list[str]:
    """The store's run ids that start with what was typed."""
    store = _store(ctx)
    try:
        names = sorted(p.name for p in (store / "runs").iterdir() if p.is_dir()) if store is not None else []
    except OSError:
        return []
    return [name for name in names if name.startswith(incomplete)]


def stage_ids(ctx: Any, incomplete: str) -> list[str]:
    """The run's stage ids, in the template's order (its compiled schema's; a stage has a file
    under stages/ only once it has something to say)."""
    run = _run_dir(ctx)
    order = _schema_enum(run / "state.yaml", "current_stage") if run is not None else []
    files = sorted((run / "stages").glob("*.yaml")) if run is not None and (run / "stages").is_dir() else []
    stems = order or sorted(f.stem for f in files)
    return [stem for stem in stems if stem.startswith(incomplete)]


def statuses(ctx: Any, incomplete: str) -> list[str]:
    """The stage statuses of the run's template."""
    run = _run_dir(ctx)
    values = _schema_enum(run / "state.yaml", "status", kind="stage") if run is not None else []
    return [value for value in values if value.startswith(incomplete)]


def pipeline_states(ctx: Any, incomplete: str) -> list[str]:
    """The pipeline states of the run's template that `pipeline` accepts (a schema compiled before
    x-requestable existed: all of them)."""
    run = _run_dir(ctx)
    values = []
    if run is not None:
        values = (_schema_enum(run / "state.yaml", "pipeline_state", "x-requestable")
                  or _schema_enum(run / "state.yaml", "pipeline_state"))
    return [value for value in values if value.startswith(incomplete)]

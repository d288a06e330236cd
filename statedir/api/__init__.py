"""The Python API: keep a store open and make transitions without a new process.

    import statedir
    statedir.init("state")          # once: make the store
    sd = statedir.open("state")
    sd.new("run-1", topic="AI and QA")
    sd.stage("run-1", "1", "in_progress")
"""
# Lazy imports: api.caller_inputs, api.making, api.state_dir, store.create: each method imports what its own call
#   uses, so a call pays for its own path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a no-op sync's short path loads none)
if TYPE_CHECKING:
    from typing import Any

    from statedir.api.caller_inputs import read_yaml_file, resolve
    from statedir.api.making import init
    from statedir.api.state_dir import RUN_FIELDS, StateDir
    from statedir.store.create import CONFIG_DEFAULTS

__all__ = ["CONFIG_DEFAULTS", "RUN_FIELDS", "StateDir", "init", "read_yaml_file", "resolve"]


def __getattr__(name: str) -> Any:
    """`StateDir` and `RUN_FIELDS` (statedir.api.state_dir: a command that opens no store, `validate
    FILE`, loads none of it), `init` (statedir.api.making) and `CONFIG_DEFAULTS` (statedir.store.create),
    `read_yaml_file` and `resolve` (statedir.api.caller_inputs), loaded when first asked for: a
    transition uses none of the last four."""
    if name in ("StateDir", "RUN_FIELDS"):
        from statedir.api import state_dir

        return getattr(state_dir, name)
    if name == "init":
        from statedir.api import making

        return making.init
    if name == "CONFIG_DEFAULTS":
        from statedir.store import create

        return create.CONFIG_DEFAULTS
    if name in ("read_yaml_file", "resolve"):
        from statedir.api import caller_inputs

        return getattr(caller_inputs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

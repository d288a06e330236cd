"""The adjudication-activity methods of the Python API (`StateDir.bind`, `StateDir.seal`)."""
# Lazy imports: api.caller_inputs, api.moves, ars.flow: each method imports what its own call uses, so a call pays for its own
#   path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.api.opened import Opened
from statedir.argument_checks import check_size, checked
from statedir.engine.transition_data import Request
from statedir.errors import InvalidValue, StatedirError


@checked
class Adjudication(Opened):
    """Mixed into StateDir: best-effort bindings and the seal after the terminal state."""

    def bind(self, run_id: str, family: str, *, artifact: str | None = None, role: str | None = None,
             group: str | None = None, group_stage: str | None = None, path: str | None = None,
             not_applicable: bool = False, unavailable: str | None = None,
             actor: str | None = None, expect: str | None = None) -> dict[str, Any]:
        """Best-effort: add one artifact binding to FAMILY's row, or mark the row not applicable
        or unavailable (REASON). Its own commit, after the transition it records."""
        from statedir.ars import flow

        chosen = [artifact is not None or path is not None, not_applicable, unavailable is not None]
        if sum(chosen) != 1:
            raise InvalidValue("bind takes an artifact ({opt:artifact} {opt:role} {opt:group} {opt:path}), "
                               "{opt:not_applicable} or {opt:unavailable} REASON: exactly one of them")
        args = {"family": family, "artifact": artifact, "role": role, "group": group, "group_stage": group_stage,
                "path": path, "not_applicable": not_applicable, "unavailable": unavailable}
        req = Request("bind", self._actor(actor), args)
        with self.store.expecting(expect):
            try:
                return flow.bind(self.store, run_id, req, timeout=self.lock_timeout)
            except StatedirError as refusal:
                from statedir.api import moves

                moves.name_in(self.store, refusal)
                raise

    def seal(self, run_id: str, artifact_root: str | Path, *, bindings: str | list[Any] | None = None,
             actor: str | None = None, expect: str | None = None) -> dict[str, Any]:
        """After the terminal state: hash every bound artifact under `artifact_root` and write
        `adjudication_activity_sources` (the run's pending rows, or `bindings`)."""
        from statedir.api.caller_inputs import read_yaml_file
        from statedir.ars import flow

        rows = read_yaml_file(bindings) if isinstance(bindings, str) else bindings
        if isinstance(bindings, str):  # copied into the run: bounded as an argument is
            check_size("seal", "bindings", rows, file=bindings)
        req = Request("seal", self._actor(actor), {"bindings": rows})
        with self.store.expecting(expect):
            return flow.seal(self.store, run_id, Path(artifact_root), req, timeout=self.lock_timeout)

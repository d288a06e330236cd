"""What each part of the Python API's StateDir relies on from the others (`Opened`): the store, its
lock timeout and the actor's reading (StateDir's own), a run read (`load`, `show`, `passports`),
a transition made (`Transitions._do`). Each mixin (`Transitions`, `EntryGates`, `Reports`,
`History`, `Overview`, `Adjudication`, `People`) is an `Opened`; StateDir has them all."""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from statedir.engine.template import Template
    from statedir.store.store import Store


class Opened(Protocol):
    """An open store as the API's parts use it."""

    store: Store
    lock_timeout: float | None
    reset_boundaries: bool  # ARS_PASSPORT_RESET=1: FULL checkpoints are boundaries

    def _actor(self, actor: str | None, default: str = "pipeline_orchestrator") -> str:
        """StateDir's: the argument, STATEDIR_ACTOR, then `default`."""
        ...

    def _acting(self, actor: str | None, role: str | None = None,
                default: str = "pipeline_orchestrator") -> tuple[str, dict[str, str]]:
        """StateDir's: the role, and the person acting in it where one does."""
        ...

    def _as_person(self, who: dict[str, str]) -> contextlib.AbstractContextManager[None]:
        """StateDir's: commits made meanwhile name the person."""
        ...

    def load(self, run_id: str, *, ledger: bool = False) -> Any:
        """StateDir's: the run's template and data, under the shared lock."""
        ...

    def show(self, run_id: str, *, at: str | None = None, format: str = "json", history: bool = True) -> dict[str, Any]:
        """StateDir's: the whole run as one document, now or at a commit."""
        ...

    def passports(self, run_id: str, t: Template | None = None) -> dict[str, Any]:
        """StateDir's: every version's passport, as read now."""
        ...

    def _do(self, run_id: str, action: str, actor: str | None, reason: str | None = None, *,
            expect: str | None = None, who: dict[str, str] | None = None, role: str | None = None,
            **args: Any) -> dict[str, Any]:
        """Transitions': one transition, decided by the rules and committed."""
        ...

    def _receipt_root(self) -> str:
        """Transitions': where the run's receipts are bound."""
        ...

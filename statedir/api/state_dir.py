"""The open store of the Python API (`StateDir`): the mixins' methods on one Store, its lock and
its actor (statedir.api re-exports it, loaded when first asked for)."""
# Lazy imports: datetime, api.caller_inputs, bus, engine.materials, engine.renumbered, engine.run_document,
#   engine.run_reading, engine.tracker_document, gitops.identity, gitops.libgit, gitops.merge_driver_config,
#   history.snapshot, research, signing.manage, store.people, sync.exchange: each method imports what its own call
#   uses, so a call pays for its own path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from statedir.api.adjudication import Adjudication
from statedir.api.entry_gates import EntryGates
from statedir.api.history import History
from statedir.api.overview import Overview
from statedir.api.people import People
from statedir.api.reports import Reports
from statedir.api.transitions import Transitions
from statedir.argument_checks import checked
from statedir.engine.template import Template
from statedir.errors import StatedirError
from statedir.store import layout
from statedir.store.store import Store

if TYPE_CHECKING:
    from statedir.bus import Bus

_Method = TypeVar("_Method", bound=Callable[..., Any])


def _reads(method: _Method) -> _Method:
    """A read of several files, made under the shared store lock: never half a transition."""
    @functools.wraps(method)
    def wrapper(self: StateDir, *args: Any, **kwargs: Any) -> Any:
        with self.reading():
            return method(self, *args, **kwargs)
    return wrapper  # type: ignore[return-value]


RUN_FIELDS = ("run_id", "template", "pipeline_state", "current_stage")  # what `runs` lists of each run


@checked
class StateDir(Transitions, EntryGates, Reports, History, Overview, Adjudication, People):
    """An open store. Every method that changes state makes exactly one commit.

    `actor` is who asks when a method is given none: default STATEDIR_ACTOR, as for the CLI,
    then the template's default actor.
    """

    def __init__(self, path: str | Path, *, lock_timeout: float | None = None,
                 reset_boundaries: bool = False, actor: str | None = None, inprocess_git: bool = False) -> None:
        self.store = Store(Path(path))
        if inprocess_git:  # libgit2 loaded once: no git process per commit (statedir.gitops.libgit)
            from statedir.gitops.libgit import LibgitBackend

            self.store.objects = LibgitBackend(self.store.worktree)
        self.lock_timeout = lock_timeout
        self.reset_boundaries = reset_boundaries  # ARS_PASSPORT_RESET=1: FULL checkpoints are boundaries
        self.actor = actor or os.environ.get("STATEDIR_ACTOR") or None
        self.roles_only = False  # `actor` names a role only, never a person (an MCP server's callers)
        from statedir.api import syncing

        syncing.prepared(self.store, lock_timeout)  # the merge driver's warning, a dead writer's half rolled back

    def _actor(self, actor: str | None, default: str = "pipeline_orchestrator") -> str:
        from statedir.gitops.identity import check_name

        return check_name(actor if actor is not None else self.actor or default, "actor")

    def _acting(self, actor: str | None, role: str | None = None,
                default: str = "pipeline_orchestrator") -> tuple[str, dict[str, str]]:
        """(the role, {person} where a person acts): `actor` (else the StateDir's, else `default`)
        names a role, or, where statedir.yaml lists people, a person acting in `role` (their one
        role where they hold one). statedir.store.people.acting's refusals."""
        from statedir.gitops.identity import check_name
        from statedir.store import people

        named = actor if actor is not None else self.actor or default
        if self.roles_only:  # an MCP server's callers: the role they name, never a person
            acted, person = check_name(named, "actor"), None
        else:
            acted, person = people.acting(self.store, named, role)
        return acted, ({"person": person} if person else {})

    @contextlib.contextmanager
    def _as_person(self, who: dict[str, str]) -> Iterator[None]:
        """Commits made meanwhile name the person `who` names (Statedir-Person), where one acts."""
        if not who:
            yield
            return
        from statedir.gitops.identity import PERSON

        before = self.store.trailers
        self.store.trailers = {**before, PERSON: who["person"]}
        try:
            yield
        finally:
            self.store.trailers = before

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold the store's shared lock: reads inside see no transition half made."""
        return self.store.reading(self.lock_timeout)

    # --- reading ------------------------------------------------------------------------------
    @_reads
    def runs(self) -> list[dict[str, Any]]:
        """Every run's id, template, pipeline_state and current_stage; a run whose state
        cannot be read is listed with its `error` ({code, message, details}) instead."""
        from statedir.engine import run_reading

        out = []
        sources = run_reading.Sources(self.store)
        for run_id in self.store.run_ids():
            try:
                state = sources.read(f"runs/{run_id}/state.yaml")
            except StatedirError as exc:
                out.append({**dict.fromkeys(RUN_FIELDS), "run_id": run_id, **exc.as_json()})
                continue
            out.append({k: state.get(k) for k in RUN_FIELDS})
        return out

    @_reads
    def load(self, run_id: str, *, ledger: bool = False) -> Any:
        from statedir.engine import run_reading

        layout.check_run_id(run_id)
        return run_reading.load_run(self.store, run_id, ledger=ledger)

    @_reads
    def passports(self, run_id: str, t: Template | None = None) -> dict[str, Any]:
        """Every version's passport, current and past, as read now: a VERIFIED passport whose
        integrity pass is older than the template's window reads as STALE."""
        import datetime

        from statedir.engine import materials, run_reading

        if t is None:
            t, _, _ = self.load(run_id)
        base = self.store.require_run(run_id)
        folder = self.store.path(f"{base}/materials")
        labels = sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []
        sources = run_reading.Sources(self.store)
        now = datetime.datetime.now(datetime.timezone.utc)
        hours = float(t.doc.get("passport_stale_hours", 24))
        out = {}
        for label in labels:
            passport = dict(sources.read(f"{base}/materials/{label}.yaml"))
            passport["verification_status"] = materials.effective_status(passport, now, hours)
            out[label] = passport
        return out

    @_reads
    def show(self, run_id: str, *, at: str | None = None, format: str = "json", history: bool = True) -> dict[str, Any]:
        """The whole run as one document (`format` json or ars), now or as of commit `at`;
        `history` False: without the histories (they grow with every transition)."""
        from statedir.engine import run_document

        doc = self._show(run_id, at, format)
        return doc if history else run_document.without_histories(doc)

    def _show(self, run_id: str, at: str | None, format: str) -> dict[str, Any]:
        from statedir.engine import run_document

        if format == "ars":
            return self._show_ars(run_id, at)
        if at is not None:
            from statedir.history import snapshot

            snap = snapshot.read_at(self.store, run_id, at)
            return run_document.document(snap.template, snap.run, snap.passports, snap.histories)
        t, run, _ = self.load(run_id)
        histories = self.histories(run_id, t)
        return run_document.document(t, run, self.passports(run_id, t), histories)

    def _show_ars(self, run_id: str, at: str | None) -> dict[str, Any]:
        from statedir.engine import tracker_document

        if at is not None:
            from statedir.history import snapshot

            snap = snapshot.read_at(self.store, run_id, at)
            return tracker_document.ars(snap.template, snap.run, snap.histories)
        t, run, _ = self.load(run_id)
        return tracker_document.ars(t, run, self.histories(run_id, t))

    @_reads
    def get(self, run_id: str, path: str, *, at: str | None = None) -> Any:
        """One value of the run document by dotted path; a key holding a dot matches whole."""
        from statedir.api.caller_inputs import resolve
        from statedir.engine import run_document

        if at is not None:
            return resolve(self.show(run_id, at=at), path)
        t, run, _ = self.load(run_id)
        head = path.split(".", 1)[0]
        doc = run_document.document(t, run, self.passports(run_id, t) if head == "passports" else {},
                            self.histories(run_id, t) if head == "history" else {})
        return resolve(doc, path)

    @property
    def research(self) -> Any:
        """The research ledger of this store (`statedir.research.Ledger`)."""
        from statedir.research import Ledger

        return Ledger(self.store, lock_timeout=self.lock_timeout)

    @_reads
    def histories(self, run_id: str, t: Any = None) -> dict[str, list[dict[str, Any]]]:
        """Every log the run's template declares, whole (a log with no entry yet: []); an entry
        written before a merge renumbered the version it made names the label it has now."""
        from statedir.engine import renumbered, run_reading

        if t is None:
            t = self.load(run_id)[0]
        logs = {name: run_reading.read_log(self.store, run_id, name) for name in t.logs}
        return renumbered.histories(logs, self.passports(run_id, t))

    def signers(self) -> list[dict[str, Any]]:
        """The actors bound to SSH signing keys (signers.yaml as of HEAD): actor, type, fingerprint, comment, key."""
        from statedir.signing import manage

        return manage.listing(self.store)

    def add_signer(self, bound: str, key: str, *, actor: str | None = None,
                   expect: str | None = None) -> dict[str, Any]:
        """Bind `bound` to a public key (a .pub path or its text): one commit, signed by a trusted key."""
        from statedir.signing import manage

        from statedir.gitops.identity import check_name

        check_name(bound, "actor")
        public, comment = manage.read_key(key)
        args = {"op": "add", "actor": bound, "key": public, **({"comment": comment} if comment else {})}
        acted, who = self._acting(actor)
        with self.store.expecting(expect), self._as_person(who):
            return manage.change(self.store, args, acted, self.lock_timeout)

    def remove_signer(self, bound: str, key: str | None = None, *, actor: str | None = None,
                      expect: str | None = None) -> dict[str, Any]:
        """Unbind `bound`'s key `key` (default: all its keys): one commit, signed by a trusted key."""
        from statedir.signing import manage

        from statedir.gitops.identity import check_name

        check_name(bound, "actor")
        args = {"op": "remove", "actor": bound, "key": manage.read_key(key)[0] if key else None}
        acted, who = self._acting(actor)
        with self.store.expecting(expect), self._as_person(who):
            return manage.change(self.store, args, acted, self.lock_timeout)

    def acknowledgers(self) -> list[str]:
        """The actors whose signed acknowledgements of verify findings count on every clone (signers.yaml)."""
        from statedir.signing import manage

        return manage.acknowledgers(self.store)

    def set_acknowledgers(self, actors: list[str], *, actor: str | None = None,
                          expect: str | None = None) -> dict[str, Any]:
        """Name the actors whose signed acknowledgements count on every clone (none: only the
        clone that acknowledged): one commit, signed by an acknowledger's key (or, while none is
        bound, by a key signers.yaml trusts)."""
        from statedir.signing import manage

        args = {"op": "acknowledgers", "actors": list(actors)}
        acted, who = self._acting(actor)
        with self.store.expecting(expect), self._as_person(who):
            return manage.change(self.store, args, acted, self.lock_timeout)

    def sync(self, remote: str | None = None, *, actor: str | None = None, expect: str | None = None,
             replay: bool = False) -> dict[str, Any]:
        """Fetch, merge with the statedir driver, validate and verify, push (see statedir.sync); with
        `replay`, a refused merge is resolved by deciding this branch's unpublished transitions again
        on top of the remote's state (statedir.sync.replay)."""
        from statedir.api import syncing

        return syncing.sync(self.store, remote, actor=self._actor(actor, "state_tracker"), expect=expect,
                            replay=replay, lock_timeout=self.lock_timeout)

    def bus(self, session: str) -> Bus:
        """The handoff-bus session `session` (a statedir.bus.Bus: init, set, append, get, clear; its
        writes take `expect`, about the session's file)."""
        from statedir.bus import Bus

        return Bus(self.store, session, lock_timeout=self.lock_timeout)

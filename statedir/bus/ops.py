"""The bus's operations on one session: read it, decide, then one commit through `persist()`
under the store lock, so concurrent writers are serialized and nothing is lost."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.argument_checks import names_a_file
from statedir.bus import fields, scratch, session
from statedir.bus.errors import UnknownSession
from statedir.gitops import commit_message
from statedir.hints import HINT, Hint
from statedir.store.store import Store
from statedir.store.write import persist

DEFAULT_ACTOR = "pipeline_orchestrator"


def decided(session_id: str, old: dict[str, Any], field: str, value: str, *,
            append: bool) -> tuple[dict[str, Any], bytes]:
    """The pure part of `set`/`append`, shared with verify's replay: the session after the
    change and its file's bytes, or the refusal."""
    parts = fields.parse(field)
    session.check_text("value", value)
    new = fields.decide(old, parts, value, append=append)
    return new, session.encode(session_id, new)


def _short(value: str, width: int = 60) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= width else flat[:width - 3] + "..."


class Bus:
    """One handoff-bus session of a store: `init`, `set`, `append`, `get`, `clear`, as the
    hasbrains-agent-kit's pipeline-state.sh, each change one commit of `bus/<session>.yaml`."""

    def __init__(self, store: Store, session_id: str, *, lock_timeout: float | None = None) -> None:
        """`session_id` is the label, or the path of the session's file (anything with a '/')."""
        self.store = store
        self.session = session.of_file(store, session_id) if names_a_file("session", session_id) else session.check_session(session_id)
        self.rel = session.rel_path(self.session)
        self.lock_timeout = lock_timeout

    @property
    def path(self) -> Path:
        """The session's file (what `init` prints, for agents to receive as `state_file`)."""
        return self.store.root / self.rel

    def _result(self, sha: str | None, **extra: Any) -> dict[str, Any]:
        return {"session": self.session, "run_id": self.session, "path": str(self.path), **extra,
                "changed": sha is not None, "commit": sha}

    def _write(self, raw: bytes, before: bytes | None, summary: str, actor: str, verb: str) -> str | None:
        """Persist the session's new bytes as one commit; None when they would not change."""
        if raw == before:
            return None
        message = commit_message.message(summary, self.session, actor, f"bus-{verb}")
        return persist(self.store, writes={self.rel: raw, **session.schema_copy(self.store)}, message=message,
                       author=actor)

    # --- writing ------------------------------------------------------------------------------
    def init(self, *, clean: Path | None = None, actor: str = DEFAULT_ACTOR,
             expect: str | None = None) -> dict[str, Any]:
        """Start the session fresh (`{session, phases: {}}`); no other session is touched. With
        `clean`, empty that scratch folder first (pipeline-state.sh's `.ai_log/` cleanup, opt-in).
        Every write takes `expect`: HEAD_MOVED where the session's file changed after that commit."""
        session.check_actor(actor)
        folder = scratch.check_scratch(self.store, clean) if clean is not None else None
        with self.store.expecting(expect), self.store.locked(self.lock_timeout, scope=self.rel):
            removed = scratch.clean(self.store, folder) if folder is not None else []
            before = self.store.read_bytes(self.rel)  # a broken session may be started afresh too
            sha = self._write(session.encode(self.session, session.fresh(self.session)), before,
                              f"bus init {self.session}", actor, "init")
        extra: dict[str, Any] = {"cleaned": removed} if folder is not None else {}
        return self._result(sha, summary=f"session {self.session} initialized", **extra)

    def set(self, field: str, value: str, *, actor: str = DEFAULT_ACTOR, expect: str | None = None) -> dict[str, Any]:
        """Store a string at `field` (dotted: `phases.1-design.status`), replacing whatever it held;
        a missing session is created, as pipeline-state.sh does."""
        return self._change(field, value, actor, append=False, expect=expect)

    def append(self, field: str, value: str, *, check_path: bool = False,
               actor: str = DEFAULT_ACTOR, expect: str | None = None) -> dict[str, Any]:
        """Add a string to the list at `field`, creating it; with `check_path` the value must be
        a path that exists inside the repository (evidence-based gates)."""
        return self._change(field, value, actor, append=True, check_path=check_path, expect=expect)

    def _change(self, field: str, value: str, actor: str, *, append: bool,
                check_path: bool = False, expect: str | None = None) -> dict[str, Any]:
        session.check_actor(actor)
        parts = fields.parse(field)
        session.check_text("value", value)
        if check_path:
            scratch.check_evidence(self.store, value)
        verb = "append" if append else "set"
        with self.store.expecting(expect), self.store.locked(self.lock_timeout, scope=self.rel):
            current = session.read(self.store, self.session)
            old = current[0] if current else session.fresh(self.session)
            new, raw = decided(self.session, old, field, value, append=append)
            summary = f"bus {verb} {self.session} {field} {'+=' if append else '='} {_short(value)}"
            sha = self._write(raw, current[1] if current else None, summary, actor, verb)
        # an append answers with what it added and the list's new length, not a copy of the list
        grown = {"value": value, "length": len(fields.lookup(new, parts))} if append else \
            {"value": fields.lookup(new, parts)}
        return self._result(sha, field=field, **grown,
                            summary=f"{self.session}: {field} {'+=' if append else '='} {_short(value)}")

    def clear(self, *, actor: str = DEFAULT_ACTOR, expect: str | None = None) -> dict[str, Any]:
        """Remove the session's file (one commit; history keeps it). A missing session is not an
        error, as pipeline-state.sh's `rm -f`; nothing changes then."""
        session.check_actor(actor)
        with self.store.expecting(expect), self.store.locked(self.lock_timeout, scope=self.rel):
            if self.store.read_bytes(self.rel) is None:  # a broken file may still be cleared
                sha = None
            else:
                message = commit_message.message(f"bus clear {self.session}", self.session, actor, "bus-clear")
                sha = persist(self.store, writes={}, removes=[self.rel], message=message, author=actor)
        return self._result(sha, summary=f"session {self.session} cleared" if sha else
                            f"no session {self.session}; nothing to clear")

    # --- reading ------------------------------------------------------------------------------
    def get(self, field: str | None = None) -> Any:
        """The whole session, or the value at `field` (None when it has no value); a missing
        session is UNKNOWN_SESSION."""
        parts = fields.parse(field) if field is not None else None
        current = session.read(self.store, self.session)
        if current is None:
            raise UnknownSession(f"no bus session {self.session!r} in this store (run `{HINT}` first)",
                                 hint=Hint("bus init", {"session": self.session}), session=self.session,
                                 path=str(self.path))
        if parts is None:
            return current[0]
        value = fields.lookup(current[0], parts)
        return None if value is fields.MISSING else value

"""The history methods of the Python API (mixed into StateDir): the audit trail, semantic
diffs, versions, rollback, verify (replay) and doctor."""
# Lazy imports: errors, gitops.git, gitops.objects, history.acknowledgements, history.diff, history.doctor,
#   history.log, history.rollback, history.snapshot, history.verify, history.versions: each method imports what its own
#   call uses, so a call pays for its own path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from typing import Any

from statedir.api.opened import Opened
from statedir.argument_checks import checked
from statedir.hints import HINT, Hint
from statedir.store import layout


@checked
class History(Opened):
    """Mixed into StateDir: what git remembers of a store, and repairs."""

    def snapshot(self, run_id: str, at: str) -> Any:
        """The run as of commit `at`, read from history: its template, run data, passports and
        histories (statedir.history.snapshot.Snapshot; nothing is checked out)."""
        from statedir.history import snapshot

        return snapshot.read_at(self.store, run_id, at)

    def log(self, run_id: str | None = None, *, actor: str | None = None, action: str | None = None,
            since: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Every commit that touched the store (or `run_id`'s folder), newest first, statedir's
        own and others' (`statedir: false`), filtered; one git process."""
        from statedir.errors import UnknownRun
        from statedir.history import log

        found = log.entries(self.store, run_id, actor=actor, action=action, since=since, limit=limit)
        if run_id and not found and not self.store.path(self.store.run_dir(run_id)).is_dir():
            raise UnknownRun(f"no run {run_id!r} in this store or its history; see `{HINT}`", hint=Hint("runs"),
                             run_id=run_id)
        return found

    def log_page(self, run_id: str | None = None, *, cursor: str = "start", limit: int = 50, actor: str | None = None,
                 action: str | None = None, since: str | None = None) -> dict[str, Any]:
        """One page of `log`: {entries, next_cursor}; pass next_cursor back for the next page
        ('start': the newest), until it is None. Commits made meanwhile never shift a page."""
        from statedir.errors import UnknownRun
        from statedir.history import log

        page = log.page(self.store, run_id, cursor=cursor, limit=limit, actor=actor, action=action, since=since)
        if run_id and not page["entries"] and not self.store.path(self.store.run_dir(run_id)).is_dir():
            raise UnknownRun(f"no run {run_id!r} in this store or its history; see `{HINT}`", hint=Hint("runs"),
                             run_id=run_id)
        return page

    def diff(self, run_id: str, start: str, end: str | None = None) -> dict[str, Any]:
        """What changed in the run document from commit `start` to `end` (default: now)."""
        from statedir.gitops import objects
        from statedir.history import diff

        before = self.show(run_id, at=start)
        after = self.show(run_id, at=end) if end is not None else self.show(run_id)
        return {"run_id": run_id, "from": objects.resolve(self.store.worktree, start),
                "to": objects.resolve(self.store.worktree, end) if end is not None else None,
                "changes": diff.changes(before, after)}

    def versions(self, run_id: str, material: str) -> list[dict[str, Any]]:
        """Every version of a material (or series), oldest first: {version_label, commit, passport}."""
        from statedir.history import versions

        t, _, _ = self.load(run_id)
        return versions.versions(self.store, run_id, material, t, self.passports(run_id, t))

    def rollback(self, run_id: str, *, to: str, reason: str, actor: str | None = None,
                 expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        """One new commit that brings the run's mutable files back to commit `to`."""
        from statedir.history import rollback

        acted, who = self._acting(actor, role)
        with self.store.expecting(expect):
            return rollback.rollback(self.store, run_id, to, reason, acted, timeout=self.lock_timeout, who=who)

    def verify(self, run_id: str | None = None, *, since: str | None = None,
               newest: int | None = None) -> dict[str, Any]:
        """Replay history: {clean, checked, findings: [{commit, kind, file, message}]}; `newest`
        (with `run_id`, no `since`): only the run's newest that many commits, as `log` lists them."""
        from statedir.errors import InvalidValue
        from statedir.history import verify

        if run_id is not None:
            layout.check_run_id(run_id)
        if newest is not None and (run_id is None or since is not None or newest < 1):
            raise InvalidValue("{opt:newest} is a count of at least 1 of one run's newest commits: it needs a run "
                               "and no {opt:since}", newest=newest)
        return verify.verify(self.store, run_id, since, newest=newest)

    def acknowledge(self, commit: str, *, reason: str, actor: str | None = None) -> dict[str, Any]:
        """Record, in one commit, that `commit`'s verify findings were reviewed and are accepted
        (`reason`: what the review found); verify then lists them as acknowledged, not as findings."""
        from statedir.errors import InvalidValue
        from statedir.gitops import git, objects
        from statedir.history import acknowledgements, verify

        if not reason.strip():
            raise InvalidValue("acknowledging a finding needs a reason (what the review found)", argument="reason")
        sha = objects.resolve(self.store.worktree, commit)
        parents = git.run(self.store.worktree, "rev-list", "--parents", "-n1", sha).stdout.decode().split()[1:]
        found = verify.verify(self.store, since=parents[0] if parents else None)
        mine = [f for f in found["findings"] + found.get("acknowledged", []) if f["commit"] == sha]
        if not mine:
            raise InvalidValue(f"verify finds nothing to acknowledge in {sha[:10]} (a commit of the current "
                               f"branch with a finding: `{HINT}` lists them)", hint=Hint("verify"), commit=sha)
        acted, who = self._acting(actor)
        with self._as_person(who):
            return acknowledgements.record(self.store, sha, mine, reason, acted, timeout=self.lock_timeout)

    def doctor(self, *, fix: bool = False, expect: str | None = None) -> dict[str, Any]:
        """What a crash, a clone or a hand edit left behind; repaired with `fix`."""
        from statedir.history import doctor

        with self.store.expecting(expect):  # about the whole store
            return doctor.doctor(self.store, fix=fix, timeout=self.lock_timeout)

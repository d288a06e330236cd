"""The API's cheap reads for a viewer that looks at many runs at once (mixed into StateDir):
run ids from one directory listing, one run's summary and last change, HEAD, bus sessions and
every research record of a kind."""
# Lazy imports: bus, bus.session, engine.template, engine.run_reading, gitops.git, history.log, history.path_index,
#   research.query, store.run_logs: each method imports what its own call uses, so a call pays for its own path only
#   (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from typing import Any

from statedir.api.opened import Opened
from statedir.argument_checks import checked
from statedir.errors import StatedirError
from statedir.store import layout

SUMMARY_FIELDS = ("run_id", "template", "pipeline_state", "current_stage", "topic", "updated_at")


@checked
class Overview(Opened):
    """Mixed into StateDir: reads that open one run (or none), so a listing of 10,000 runs
    pages through them instead of opening every one."""

    def run_ids(self) -> list[str]:
        """Every run's id, sorted: one directory listing, no file opened."""
        return self.store.run_ids()

    def pipeline_states(self) -> list[str]:
        """The pipeline states a run of the store's default template can be in, in the template's order."""
        from statedir.engine import template as template_mod

        name = str(self.store.config.get("default_template", "academic-pipeline"))
        t = template_mod.load(name, self.store.root / "templates", self.store.cache_dir)
        return list(dict.fromkeys(str(v) for v in t.pipeline.values()))

    def bus_history(self, session: str, limit: int = 100) -> list[dict[str, Any]]:
        """The commits that changed a bus session's file, newest first (as `log` lists them)."""
        from statedir.bus import Bus
        from statedir.history import log

        return log.entries(self.store, limit=limit, path=Bus(self.store, session).rel)

    def head(self) -> str | None:
        """The repository's HEAD commit (None before the first), read from the ref files."""
        from statedir.gitops import git

        return git.head(self.store.worktree)

    def run_summary(self, run_id: str) -> dict[str, Any]:
        """One run as a listing shows it: {run_id, template, pipeline_state, current_stage, topic,
        updated_at, last: the newest transitions entry {at, actor, action, summary, reason} or
        None}; a run that cannot be read carries its `error` instead."""
        return self.run_summaries([run_id])[0]

    def run_summaries(self, run_ids: list[str]) -> list[dict[str, Any]]:
        """`run_summary` of each run, read under one hold of the shared lock."""
        from statedir.engine import run_reading
        from statedir.store import run_logs

        for run_id in run_ids:
            layout.check_run_id(run_id)
        out = []
        with self.store.reading(self.lock_timeout):
            sources = run_reading.Sources(self.store)
            for run_id in run_ids:
                try:
                    base = self.store.require_run(run_id)
                    state = sources.read(f"{base}/state.yaml")
                    segments = run_logs.files(self.store, base, "transitions")
                    entries = run_logs.read_file(self.store, segments[-1], "transitions") if segments else []
                except StatedirError as exc:
                    out.append({**dict.fromkeys(SUMMARY_FIELDS), "run_id": run_id, "last": None, **exc.as_json()})
                    continue
                last = entries[-1] if entries else None
                summary = {k: state.get(k) for k in SUMMARY_FIELDS}
                summary["last"] = ({k: last.get(k) for k in ("at", "actor", "action", "summary", "reason")}
                                   | ({"person": last["person"]} if last.get("person") else {}) if last else None)
                out.append(summary)
        return out

    def changed_runs(self, old: str, new: str) -> set[str]:
        """The runs whose folders differ between commits `old` and `new` (one git process)."""
        from statedir.gitops import git

        spec = self.store.git_path("runs")
        out = git.run(self.store.worktree, "diff", "--name-only", "--no-renames", old, new, "--", spec).stdout
        depth = len(spec.split("/"))
        return {parts[depth] for line in out.decode(errors="replace").splitlines()
                if len(parts := line.split("/")) > depth + 1}

    def signed(self, run_id: str, limit: int = 500) -> set[str]:
        """The commits among the run's newest `limit` that carry a signature (checked or not:
        `verify` judges them); only the run's commits are read (statedir.history.path_index)."""
        from statedir.gitops import git
        from statedir.history import path_index

        if git.head(self.store.worktree) is None:
            return set()
        spec = self.store.git_path(self.store.run_dir(run_id))
        out = path_index.records(self.store, path_index.commits(self.store, spec)[:limit], "--pretty=raw")
        found, sha = set(), None
        for line in out.decode(errors="replace").splitlines():
            if line.startswith("commit "):
                sha = line.split()[1]
            elif sha and line.startswith("gpgsig"):
                found.add(sha)
        return found

    def bus_sessions(self) -> list[str]:
        """The handoff-bus sessions of this store, sorted (one directory listing)."""
        from statedir.bus import session

        folder = self.store.root / session.FOLDER
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.yaml") if p.is_file() and not p.is_symlink())

    def research_records(self, kind: str) -> list[dict[str, Any]]:
        """Every research record of `kind` (project, question, hypothesis, experiment, run,
        source, evidence, result, claim) as the ledger's index holds it, oldest first."""
        from statedir.research import query

        return query.every(self.store, kind)

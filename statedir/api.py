"""The Python API: keep a store open and make transitions without a new process.

    import statedir
    sd = statedir.open("state")
    sd.new("run-1", topic="AI and QA")
    sd.stage("run-1", "1", "in_progress")
"""
from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from statedir import git, gitcommit, transaction, yaml
from statedir import store as store_mod
from statedir.arguments import checked
from statedir.change import Request
from statedir.errors import BadFile, InvalidValue, StatedirError, WriteFailed
from statedir.journal import JOURNAL
from statedir.store import Store
from statedir.template import Template

if TYPE_CHECKING:
    from statedir.bus import Bus

CONFIG_DEFAULTS = {"format_version": 1, "default_template": "academic-pipeline", "lock_timeout": 30}


def init(directory: str | Path) -> dict[str, Any]:
    """Make a store at `directory` (git init first where it is in no work tree); commits it.

    An existing store is left as it is; anything else already at `directory` is refused, and
    a failure part way removes what this call created.
    """
    if not isinstance(directory, str | Path):
        raise InvalidValue(f"init(): directory must be a path, not {type(directory).__name__}")
    directory = Path(directory).resolve()
    if (directory / store_mod.CONFIG).is_file():
        return {"store": str(directory), "created": False, "commit": None}
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InvalidValue(f"{directory} exists and is neither empty nor a statedir store", path=str(directory))
    created = not directory.exists()
    try:
        if git.find_worktree(directory) is None:
            git.init(directory.parent)
        directory.mkdir(parents=True, exist_ok=True)
        files = {".gitignore": store_mod.GITIGNORE, ".gitattributes": store_mod.GITATTRIBUTES,
                 store_mod.CONFIG: yaml.dump(CONFIG_DEFAULTS, store_mod.schema_ref(store_mod.CONFIG))}
        for rel, text in files.items():
            (directory / rel).write_text(text)
        store = Store(directory)
        with store.locked():
            written = store_mod.copy_schemas(directory)
            paths = [store.git_path(r) for r in [*files, *written]]
            git.preflight(store.worktree)
            from statedir.sync import register

            register.register(store.worktree)
            sha = gitcommit.commit(store.worktree, paths, git.message("init statedir store", "-", "state_tracker",
                                                                      "init"), author="state_tracker")
    except OSError as exc:
        _undo_init(directory, created)
        raise WriteFailed(f"cannot make a store at {directory}: {exc.strerror or exc}") from None
    except BaseException:
        _undo_init(directory, created)
        raise
    return {"store": str(directory), "created": True, "commit": sha}


def _undo_init(directory: Path, created: bool) -> None:
    if directory.is_dir():
        if created:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            for child in directory.iterdir():
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)


def _open_regular(path: str, what: str) -> Any:
    """A named file opened for reading; a FIFO, device or directory is refused, never waited on."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InvalidValue(f"cannot read {what} {path}: {exc.strerror}", file=path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidValue(f"{what} {path} is not a regular file", file=path)
    return os.fdopen(fd, "rb")


def _file_hash(path: str) -> dict[str, str]:
    """The SHA-256 of a file, read in chunks (a file of any size costs no memory)."""
    import hashlib

    with _open_regular(path, "--file") as f:
        try:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError as exc:
            raise InvalidValue(f"cannot read --file {path}: {exc.strerror}", file=path) from None
    return {"path": path, "content_hash": digest}


def read_yaml_file(path: str) -> Any:
    with _open_regular(path, "file") as f:
        try:
            raw = f.read(yaml.MAX_BYTES + 1)
        except OSError as exc:
            raise BadFile(f"cannot read {path}: {exc.strerror}", file=path) from None
    return yaml.to_plain(yaml.load(raw, path))


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
class StateDir:
    """An open store. Every method that changes state makes exactly one commit."""

    def __init__(self, path: str | Path, *, lock_timeout: float | None = None,
                 reset_boundaries: bool = False) -> None:
        self.store = Store(Path(path))
        self.lock_timeout = lock_timeout
        self.reset_boundaries = reset_boundaries  # ARS_PASSPORT_RESET=1: FULL checkpoints are boundaries
        from statedir.sync import register

        missing = register.warning(self.store.root, self.store.worktree)
        self.store.standing = [missing] if missing else []
        if (self.store.root / JOURNAL).exists():
            # A writer died mid-transition: roll it back before anyone reads its half.
            with self.store.locked(lock_timeout):
                pass

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold the store's shared lock: reads inside see no transition half made."""
        return self.store.reading(self.lock_timeout)

    # --- reading ------------------------------------------------------------------------------
    @_reads
    def runs(self) -> list[dict[str, Any]]:
        """Every run's id, template, pipeline_state and current_stage; a run whose state
        cannot be read is listed with its `error` ({code, message, details}) instead."""
        out = []
        sources = transaction.Sources(self.store)
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
        store_mod.check_run_id(run_id)
        return transaction.load_run(self.store, run_id, ledger=ledger)

    @_reads
    def passports(self, run_id: str, t: Template | None = None) -> dict[str, Any]:
        """Every version's passport, current and past, as read now: a VERIFIED passport whose
        integrity pass is older than the template's window reads as STALE."""
        import datetime

        from statedir import materials

        if t is None:
            t, _, _ = self.load(run_id)
        base = self.store.require_run(run_id)
        folder = self.store.path(f"{base}/materials")
        labels = sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []
        sources = transaction.Sources(self.store)
        now = datetime.datetime.now(datetime.timezone.utc)
        hours = float(t.doc.get("passport_stale_hours", 24))
        out = {}
        for label in labels:
            passport = dict(sources.read(f"{base}/materials/{label}.yaml"))
            passport["verification_status"] = materials.effective_status(passport, now, hours)
            out[label] = passport
        return out

    @_reads
    def show(self, run_id: str, *, at: str | None = None, format: str = "json") -> dict[str, Any]:
        """The whole run as one document (`format` json or ars), now or as of commit `at`."""
        from statedir import runs

        if at is not None:
            from statedir.history import snapshot

            snap = snapshot.read_at(self.store, run_id, at)
            if format == "ars":
                return runs.ars(snap.template, snap.run, snap.histories)
            return runs.document(snap.template, snap.run, snap.passports, snap.histories)
        t, run, _ = self.load(run_id)
        histories = self.histories(run_id, t)
        if format == "ars":
            return runs.ars(t, run, histories)
        return runs.document(t, run, self.passports(run_id, t), histories)

    @_reads
    def get(self, run_id: str, path: str, *, at: str | None = None) -> Any:
        """One value of the run document by dotted path; a key holding a dot matches whole."""
        from statedir import runs

        if at is not None:
            return resolve(self.show(run_id, at=at), path)
        t, run, _ = self.load(run_id)
        head = path.split(".", 1)[0]
        doc = runs.document(t, run, self.passports(run_id, t) if head == "passports" else {},
                            self.histories(run_id, t) if head == "history" else {})
        return resolve(doc, path)

    def log(self, run_id: str | None = None, *, actor: str | None = None, action: str | None = None,
            since: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Every commit that touched the store (or `run_id`'s folder), newest first, statedir's
        own and others' (`statedir: false`), filtered; one git process."""
        from statedir.errors import UnknownRun
        from statedir.history import log

        found = log.entries(self.store, run_id, actor=actor, action=action, since=since, limit=limit)
        if run_id and not found and not self.store.path(self.store.run_dir(run_id)).is_dir():
            raise UnknownRun(f"no run {run_id!r} in this store or its history; see `statedir runs`", run_id=run_id)
        return found

    @property
    def research(self) -> Any:
        """The research ledger of this store (`statedir.research.Ledger`)."""
        from statedir.research import Ledger

        return Ledger(self.store, lock_timeout=self.lock_timeout)

    @_reads
    def histories(self, run_id: str, t: Any = None) -> dict[str, list[dict[str, Any]]]:
        """Every log the run's template declares, whole (a log with no entry yet: [])."""
        if t is None:
            t = self.load(run_id)[0]
        return {name: transaction.read_log(self.store, run_id, name) for name in t.logs}

    # --- history (statedir.history) ---------------------------------------------------------------
    def diff(self, run_id: str, start: str, end: str | None = None) -> dict[str, Any]:
        """What changed in the run document from commit `start` to `end` (default: now)."""
        from statedir.history import diff, objects

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

    def rollback(self, run_id: str, *, to: str, reason: str, actor: str | None = None) -> dict[str, Any]:
        """One new commit that brings the run's mutable files back to commit `to`."""
        from statedir.history import rollback

        return rollback.rollback(self.store, run_id, to, reason, actor or "pipeline_orchestrator",
                                 timeout=self.lock_timeout)

    def verify(self, run_id: str | None = None, *, since: str | None = None) -> dict[str, Any]:
        """Replay history: {clean, checked, findings: [{commit, kind, file, message}]}."""
        from statedir.history import verify

        if run_id is not None:
            store_mod.check_run_id(run_id)
        return verify.verify(self.store, run_id, since)

    def doctor(self, *, fix: bool = False) -> dict[str, Any]:
        """What a crash, a clone or a hand edit left behind; repaired with `fix`."""
        from statedir.history import doctor

        return doctor.doctor(self.store, fix=fix, timeout=self.lock_timeout)

    def signers(self) -> list[dict[str, Any]]:
        """The actors bound to SSH signing keys (signers.yaml as of HEAD): actor, type, fingerprint, comment, key."""
        from statedir.signing import manage

        return manage.listing(self.store)

    def add_signer(self, bound: str, key: str, *, actor: str | None = None) -> dict[str, Any]:
        """Bind `bound` to a public key (a .pub path or its text): one commit, signed by a trusted key."""
        from statedir.signing import manage

        public, comment = manage.read_key(key)
        args = {"op": "add", "actor": bound, "key": public, **({"comment": comment} if comment else {})}
        return manage.change(self.store, args, actor or "pipeline_orchestrator", self.lock_timeout)

    def remove_signer(self, bound: str, key: str | None = None, *, actor: str | None = None) -> dict[str, Any]:
        """Unbind `bound`'s key `key` (default: all its keys): one commit, signed by a trusted key."""
        from statedir.signing import manage

        args = {"op": "remove", "actor": bound, "key": manage.read_key(key)[0] if key else None}
        return manage.change(self.store, args, actor or "pipeline_orchestrator", self.lock_timeout)
    def sync(self, remote: str | None = None, *, actor: str = "state_tracker") -> dict[str, Any]:
        """Fetch, merge with the statedir driver, validate and verify, push (see statedir.sync)."""
        from statedir.sync import exchange

        return exchange.sync(self.store, remote, actor=actor, timeout=self.lock_timeout)

    def bus(self, session: str) -> Bus:
        """The handoff-bus session `session` (a statedir.bus.Bus: init, set, append, get, clear)."""
        from statedir.bus import Bus

        return Bus(self.store, session, lock_timeout=self.lock_timeout)

    # --- writing ------------------------------------------------------------------------------
    def _do(self, run_id: str, action: str, actor: str | None, reason: str | None = None,
            **args: Any) -> dict[str, Any]:
        if self.reset_boundaries:
            args["reset_boundaries"] = True
        req = Request(action, actor or "pipeline_orchestrator", args, reason)
        return transaction.transition(self.store, run_id, req, timeout=self.lock_timeout)

    def new(self, run_id: str, *, topic: str, template: str | None = None, entry_point: str | None = None,
            language: str | None = None, passport: str | None = None, confirm_skip: bool = False,
            actor: str | None = None) -> dict[str, Any]:
        from statedir import template as template_mod

        name = template or str(self.store.config.get("default_template", "academic-pipeline"))
        t = template_mod.load(name, self.store.root / "templates")
        is_file = name not in template_mod.shipped() and not (self.store.root / "templates" / f"{name}.yaml").is_file()
        args = {"template": t.name, "topic": topic, "language": language, "entry_point": entry_point,
                "passport": read_yaml_file(passport) if passport else None, "confirm_skip": confirm_skip}
        req = Request("new", actor or t.default_actor(), args)
        return transaction.create(self.store, run_id, req, t, timeout=self.lock_timeout,
                                  template_file=Path(name) if is_file else None)

    def stage(self, run_id: str, stage: str, status: str, *, mode: str | None = None,
              outputs: list[str] | None = None, decision: str | None = None, reason: str | None = None,
              turns: str | None = None, actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "stage", actor, reason, stage=stage, status=status, mode=mode,
                        outputs=outputs or [], decision=decision, turns=turns)

    def output(self, run_id: str, stage: str, outputs: list[str], *, actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "output", actor, stage=stage, outputs=outputs)

    def pipeline(self, run_id: str, state: str, *, reason: str | None = None,
                 actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "pipeline", actor, reason, state=state)

    def set(self, run_id: str, field: str, value: str, *, reason: str, actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "set", actor, reason, field=field, value=value)

    def material(self, run_id: str, names: list[str], *, files: list[str] | None = None,
                 origin_skill: str | None = None, origin_mode: str | None = None,
                 upstream: list[str] | None = None, actor: str | None = None) -> dict[str, Any]:
        hashed = [_file_hash(f) for f in files or []]
        return self._do(run_id, "material", actor, names=names, files=hashed, origin_skill=origin_skill,
                        origin_mode=origin_mode, upstream=upstream or [])

    def integrity(self, run_id: str, stage: str, verdict: str, *, refs_total: int, refs_verified: int,
                  issues_found: int | None = None, issues_fixed: int | None = None,
                  issues: list[str] | None = None, reason: str | None = None,
                  actor: str | None = None) -> dict[str, Any]:
        parsed = [_parse_issue(i) for i in issues or []]
        return self._do(run_id, "integrity", actor, reason, stage=stage,
                        verdict=verdict, refs_total=refs_total, refs_verified=refs_verified,
                        issues_found=issues_found, issues_fixed=issues_fixed, issues=parsed)

    def revision(self, run_id: str, *, items_total: int, items_addressed: int | None = None,
                 pending: list[str] | None = None, actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "revision", actor, items_total=items_total, items_addressed=items_addressed,
                        pending=pending or [])

    def loop(self, run_id: str, *, actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "loop", actor)

    def observe(self, run_id: str, stage: str, checkpoint: str, report: str | dict[str, Any], *,
                actor: str | None = None) -> dict[str, Any]:
        data = read_yaml_file(report) if isinstance(report, str) else report
        return self._do(run_id, "observe", actor, stage=stage,
                        checkpoint=checkpoint, report=data)

    def confirm(self, run_id: str, *, next: str | None = None, response: str | None = None,
                actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "confirm", actor, next=next, response=response)

    def redo(self, run_id: str, stage: str, *, reason: str, actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "redo", actor, reason, stage=stage)

    def resume(self, run_id: str, hash: str, *, stage: str | None = None, mode: str | None = None,
               choice: str | None = None, actor: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "resume", actor, hash=hash, stage=stage, mode=mode, choice=choice)

    def bind(self, run_id: str, family: str, *, artifact: str | None = None, role: str | None = None,
             group: str | None = None, group_stage: str | None = None, path: str | None = None,
             not_applicable: bool = False, unavailable: str | None = None,
             actor: str | None = None) -> dict[str, Any]:
        """Best-effort: add one artifact binding to FAMILY's row, or mark the row not applicable
        or unavailable (REASON). Its own commit, after the transition it records."""
        from statedir.ars import flow

        chosen = [artifact is not None or path is not None, not_applicable, unavailable is not None]
        if sum(chosen) != 1:
            raise InvalidValue("bind takes an artifact (--artifact --role --group --path), --not-applicable "
                               "or --unavailable REASON: exactly one of them")
        args = {"family": family, "artifact": artifact, "role": role, "group": group, "group_stage": group_stage,
                "path": path, "not_applicable": not_applicable, "unavailable": unavailable}
        req = Request("bind", actor or "pipeline_orchestrator", args)
        return flow.bind(self.store, run_id, req, timeout=self.lock_timeout)

    def seal(self, run_id: str, artifact_root: str | Path, *, bindings: str | list[Any] | None = None,
             actor: str | None = None) -> dict[str, Any]:
        """After the terminal state: hash every bound artifact under `artifact_root` and write
        `adjudication_activity_sources` (the run's pending rows, or `bindings`)."""
        from statedir.ars import flow

        rows = read_yaml_file(bindings) if isinstance(bindings, str) else bindings
        req = Request("seal", actor or "pipeline_orchestrator", {"bindings": rows})
        return flow.seal(self.store, run_id, Path(artifact_root), req, timeout=self.lock_timeout)


def resolve(doc: Any, path: str) -> Any:
    """Walk a dotted path, trying the longest key first so `stages.2.5.status` finds stage 2.5."""
    from statedir.errors import InvalidValue

    parts = path.split(".")
    node, i = doc, 0
    while i < len(parts):
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            if isinstance(node, dict) and key in node:
                node, i = node[key], j
                break
            if isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node, i = node[int(key)], j
                break
        else:
            raise InvalidValue(f"no value at {path!r} (stopped at {'.'.join(parts[i:])!r})", path=path)
    return node


def _parse_issue(text: str) -> dict[str, str]:
    parts = text.split(":", 2)
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise InvalidValue(f"--issue {text!r} must be SEVERITY:TYPE:DESCRIPTION", issue=text)
    return {"severity": parts[0].strip(), "type": parts[1].strip(), "description": parts[2].strip()}

"""The transition methods of the Python API (mixed into StateDir): each checks its request
against the run's template and makes exactly one commit, or refuses and changes nothing."""
# Lazy imports: os, api.caller_inputs, api.entry_gates, api.moves, engine.rules.submissions, engine.run_creation,
#   engine.run_reading, engine.run_settings, engine.template, engine.transaction, gitops.git: each method imports what
#   its own call uses, so a call pays for its own path only (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.api.opened import Opened
from statedir.argument_checks import check_size, checked
from statedir.engine.transition_data import Request
from statedir.errors import InvalidValue, StatedirError
from statedir.hints import Hint, Placeholder, said


def _passport(path: str) -> dict[str, Any]:
    from statedir.api.caller_inputs import read_yaml_file

    data = read_yaml_file(path)
    if not isinstance(data, dict):
        raise InvalidValue(f"{{opt:passport}} {path} is not a Material Passport (a YAML mapping)", file=path)
    check_size("new", "passport", data, file=path)  # copied into the run: bounded as an argument is
    return data


# The actions that may write a reset-boundary entry (a checkpoint opened, a boundary resumed).
SESSION_ACTIONS = ("stage", "resume")
_SESSION: list[str] = []


def session_marker() -> str:
    """This session's marker: STATEDIR_SESSION, else an id made once per process."""
    import os

    given = os.environ.get("STATEDIR_SESSION", "").strip()
    if given:
        return given
    if not _SESSION:
        _SESSION.append("s-" + os.urandom(6).hex())
    return _SESSION[0]


def _settings(t: Any, given: list[str] | None, reset_boundaries: bool) -> dict[str, str]:
    """The run settings a new run is made with: those given, else their environment variables'."""
    import os

    from statedir.engine import run_settings

    chosen = run_settings.parse_pairs(list(given or []))
    if not run_settings.declared(t):
        return chosen  # refused by the rules where any is given
    from_env = run_settings.from_environment(t, dict(os.environ), given=chosen)
    boundaries = run_settings.setting_for(t, "reset_boundaries")
    if reset_boundaries and boundaries:
        from_env.setdefault(boundaries, "true")
    return {**from_env, **chosen}


@checked
class Transitions(Opened):
    """Mixed into StateDir: every method that changes a run."""

    def _do(self, run_id: str, action: str, actor: str | None, reason: str | None = None, *,
            expect: str | None = None, who: dict[str, str] | None = None, role: str | None = None,
            **args: Any) -> dict[str, Any]:
        """`actor` names a role, or a person (statedir.yaml `people:`) acting in `role`."""
        if self.reset_boundaries:
            args["reset_boundaries"] = True
        if action in SESSION_ACTIONS:  # what a reset-boundary entry names as its session_marker
            args["session"] = args.get("session") or session_marker()
        acted, person = self._acting(actor, role)
        if "answered_by" in args and args["answered_by"] is None:  # a checkpoint's answer: by the role acting
            args["answered_by"] = acted
        req = Request(action, acted, args, reason, who={**person, **(who or {})})
        with self.store.expecting(expect):
            from statedir.engine import transaction

            try:
                return transaction.transition(self.store, run_id, req, timeout=self.lock_timeout)
            except StatedirError as refusal:
                from statedir.api import moves

                moves.name_in(self.store, refusal)
                raise

    def new(self, run_id: str, *, topic: str | None = None, template: str | None = None,
            entry_point: str | None = None, language: str | None = None, passport: str | None = None,
            confirm_skip: bool = False, actor: str | None = None, expect: str | None = None, role: str | None = None,
            file: str | None = None, settings: list[str] | None = None,
            entry_materials: list[str] | None = None) -> dict[str, Any]:
        """Create a run (one commit); `topic` is needed where the template's required_run_fields say so.

        Mid-entry past an integrity stage takes the `passport`, `confirm_skip` and the `file` it
        stands for; `entry_materials`, the files the entry stage registers (the template's
        `mid_entry.registers`: academic-pipeline, entering at 4, the reviewer comments).

        `settings` are the run settings (`KEY=VALUE`) the template declares, fixed at creation; a
        setting's environment variable (e.g. ARS_PASSPORT_RESET) is read here, and only here, where
        the setting is not given.

        Every method that writes takes `expect`: the commit the caller last read; the write is
        refused with HEAD_MOVED (nothing changed) where what it is about (here the run's folder)
        changed after it. Commits elsewhere never make it stale."""
        from statedir.engine import template as template_mod

        name = template or str(self.store.config.get("default_template", "academic-pipeline"))
        t = template_mod.load(name, self.store.root / "templates", self.store.cache_dir)  # cached for what follows
        is_file = name not in template_mod.shipped() and not (self.store.root / "templates" / f"{name}.yaml").is_file()
        args = {"template": t.name, "topic": topic, "language": language, "entry_point": entry_point,
                "passport": _passport(passport) if passport else None, "confirm_skip": confirm_skip}
        if file is not None:  # the content the passport stands for, hashed to compare (recorded only where given)
            from statedir.api.caller_inputs import file_hash

            args["file"] = file_hash(file, self.store.files_worktree)
        if entry_materials:  # hashed, with their fields for the schema checks, as `material --file` does
            from statedir.api.caller_inputs import file_hash

            args["entry_materials"] = [file_hash(f, self.store.files_worktree, with_fields=True,
                                                 what="{opt:entry_material}") for f in entry_materials]
        chosen = _settings(t, settings, self.reset_boundaries)
        if chosen:
            args["settings"] = chosen
        acted, who = self._acting(actor, role, t.default_actor())
        req = Request("new", acted, args, who=who)
        with self.store.expecting(expect):
            from statedir.engine import run_creation

            return run_creation.create(self.store, run_id, req, t, timeout=self.lock_timeout,
                                      template_file=Path(name) if is_file else None)

    def stage(self, run_id: str, stage: str, status: str, *, mode: str | None = None,
              outputs: list[str] | None = None, decision: str | None = None, reason: str | None = None,
              turns: str | None = None, session: str | None = None, actor: str | None = None,
              expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "stage", actor, reason, expect=expect, role=role, stage=stage, status=status,
                        mode=mode, outputs=outputs or [], decision=decision, turns=turns, session=session)

    def output(self, run_id: str, stage: str, outputs: list[str], *, actor: str | None = None,
               expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "output", actor, expect=expect, role=role, stage=stage, outputs=outputs)

    def pipeline(self, run_id: str, state: str, *, reason: str | None = None,
                 actor: str | None = None, expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "pipeline", actor, reason, expect=expect, role=role, state=state)

    def set(self, run_id: str, field: str, value: str, *, reason: str, actor: str | None = None,
            expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "set", actor, reason, expect=expect, role=role, field=field, value=value)

    def material(self, run_id: str, names: list[str], *, files: list[str] | None = None,
                 origin_skill: str | None = None, origin_mode: str | None = None,
                 upstream: list[str] | None = None, actor: str | None = None,
                 expect: str | None = None, allow_untracked: bool = False, role: str | None = None) -> dict[str, Any]:
        """Register the next version of a material; a file git does not track is warned of (a clone
        would not hold it) unless `allow_untracked`."""
        from statedir.api.caller_inputs import file_hash
        from statedir.gitops import git

        hashed = [file_hash(f, self.store.files_worktree, with_fields=True, what="{opt:files}") for f in files or []]
        untracked = [] if allow_untracked else git.untracked(self.store.files_worktree, [h["path"] for h in hashed])
        result = self._do(run_id, "material", actor, expect=expect, role=role, names=names, files=hashed,
                          origin_skill=origin_skill, origin_mode=origin_mode, upstream=upstream or [])
        if untracked:
            result["warnings"] = [*result.get("warnings", []), untracked_warning(untracked)]
        return result

    def integrity(self, run_id: str, stage: str, verdict: str, *, refs_total: int, refs_verified: int,
                  issues_found: int | None = None, issues_fixed: int | None = None,
                  issues: list[str] | None = None, reason: str | None = None,
                  actor: str | None = None, expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        from statedir.api.caller_inputs import parse_issue

        parsed = [parse_issue(i) for i in issues or []]
        return self._do(run_id, "integrity", actor, reason, expect=expect, role=role, stage=stage,
                        verdict=verdict, refs_total=refs_total, refs_verified=refs_verified,
                        issues_found=issues_found, issues_fixed=issues_fixed, issues=parsed)

    def revision(self, run_id: str, *, items_total: int, items_addressed: int | None = None,
                 pending: list[str] | None = None, actor: str | None = None,
                 expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "revision", actor, expect=expect, role=role, items_total=items_total,
                        items_addressed=items_addressed, pending=pending or [])

    def loop(self, run_id: str, *, actor: str | None = None, expect: str | None = None,
             role: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "loop", actor, expect=expect, role=role)

    def observe(self, run_id: str, stage: str, checkpoint: str, report: str | dict[str, Any], *,
                actor: str | None = None, expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        from statedir.api.caller_inputs import lies_in, read_yaml_file
        from statedir.engine.rules import submissions

        if isinstance(report, str):
            data = read_yaml_file(report)
            check_size("observe", "report", data, file=report)  # copied into the log: bounded as an argument is
            submissions.check_report(data, name_keys=lies_in(report, self.store.files_worktree))
        else:
            data = report
        return self._do(run_id, "observe", actor, expect=expect, role=role, stage=stage,
                        checkpoint=checkpoint, report=data)

    def confirm(self, run_id: str, *, next: str | None = None, response: str | None = None,
                actor: str | None = None, expect: str | None = None, role: str | None = None,
                answered_by: str | None = None, channel: str | None = None,
                skip_refused: bool = False, metrics: list[str] | None = None,
                quality: str | None = None, format: str | None = None,
                decision: str | None = None) -> dict[str, Any]:
        """Answer the open checkpoint. A MANDATORY checkpoint's answer, the user's own (actor `user`)
        and one the caller says the user gave (`answered_by` `user`: it asked them) is recorded as
        the user's, via the actor that carried it, with the `channel` it came by (default cli);
        any other answer is the actor's. Its log entry records who answered. `skip_refused`: the
        answer follows a refused attempt to skip this MANDATORY checkpoint (its receipt says so).
        `metrics` (`["word_count=5200", ...]`) and `quality` record the FULL checkpoint's decision
        dashboard; a quality the template holds on (regressed) pauses the run until the user answers.
        `format`: the Stage 5 entry's finalization format (citation style), the checkpoint's answer.
        `decision`: where the stage left its decision to the user (3' completed with user_review_required),
        the user's pick, which the next stage follows from."""
        who = {key: value for key, value in (("answered_by", answered_by), ("channel", channel)) if value}
        extra: dict[str, Any] = {"skip_refused": True} if skip_refused else {}
        extra.update({"metrics": list(metrics)} if metrics else {}, **({"quality": quality} if quality else {}),
                     **({"format": format} if format is not None else {}),
                     **({"decision": decision} if decision is not None else {}))
        return self._do(run_id, "confirm", actor, expect=expect, role=role, who=who, next=next, response=response,
                        answered_by=None, store_prefix=self._receipt_root(), **extra)

    def _receipt_root(self) -> str:
        """Where the store lies in the work tree `seal --artifact-root` reads (statedir's receipts' paths)."""
        try:
            return self.store.root.resolve().relative_to(self.store.files_worktree.resolve()).as_posix()
        except ValueError:
            return "."

    def resolve(self, run_id: str, stage: str, decision: str, *, reason: str | None = None,
                actor: str | None = None, expect: str | None = None,
                channel: str | None = None, role: str | None = None) -> dict[str, Any]:
        """The user's FAIL-loop resolution after an integrity stage's retry cap (one of the template's
        decisions): the user's answer whoever relays it (engine.attribution records it as the
        user's, via the role that carried it, with the `channel` it came by, default cli)."""
        who = {"answered_by": "user", "channel": channel} if channel else None
        return self._do(run_id, "resolve", actor, reason, expect=expect, role=role, who=who, stage=stage,
                        decision=decision,
                        answered_by="user")

    def checklist(self, run_id: str, stage: str, items: list[str] | dict[str, str], *,
                  evidence: list[str] | dict[str, str] | None = None, actor: str | None = None,
                  expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        """The failure-mode checklist of an integrity stage: every mode's outcome at once
        (`["1=CLEAR", ...]` or a mapping), with evidence by mode; the result says whether it
        blocks (`blocks`, `blocking`) and which modes only warn."""
        return self._do(run_id, "checklist", actor, expect=expect, role=role, stage=stage,
                        items=list(items) if not isinstance(items, dict) else dict(items),
                        evidence=(list(evidence) if not isinstance(evidence, dict) else dict(evidence))
                        if evidence else [])

    def acknowledge_mode(self, run_id: str, stage: str, mode: str, answer: str, *, reason: str | None = None,
                         actor: str | None = None, expect: str | None = None,
                         channel: str | None = None, role: str | None = None) -> dict[str, Any]:
        """The user's answer to a blocking failure mode (the CLI's `acknowledge`; `acknowledge` of
        this API is `verify --acknowledge`'s): the user's whoever relays it, as `resolve` is."""
        who = {"answered_by": "user", "channel": channel} if channel else None
        return self._do(run_id, "acknowledge_mode", actor, reason, expect=expect, role=role, who=who, stage=stage,
                        mode=mode, answer=answer, answered_by="user")

    def inquiry(self, run_id: str, *, branch: str, note: str, actor: str | None = None, expect: str | None = None,
                role: str | None = None) -> dict[str, Any]:
        """A note on a branch of the run's inquiry ledger (runs made with the setting inquiry_ledger): append-only,
        published from its second branch on, advisory (it changes no verdict)."""
        return self._do(run_id, "inquiry", actor, expect=expect, role=role, branch=branch, note=note)

    def contract(self, run_id: str, stage: str, part: str, *, file: str, exit_code: int | None = None,
                 actor: str | None = None, expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        """The re-review contract: a part's file (manifest, then the phase artifacts in order) bound
        to its SHA-256, or the synthesis check (`part` "check", with its exit code and report); at
        the check every recorded part's file is hashed again, and must be unchanged."""
        from statedir.api import caller_inputs

        from statedir.api.entry_gates import REPORT_LIMIT  # the contract's files: at most what a report may be

        args: dict[str, Any] = {"stage": stage, "part": part,
                                "file": caller_inputs.file_hash(file, self.store.files_worktree, limit=REPORT_LIMIT)}
        if part == "check":
            from statedir.engine import run_reading

            t, run, _ = run_reading.load_run(self.store, run_id)
            recorded = run.stages.get(t.resolve_stage(stage), {}).get("contract") or {}
            args.update(exit_code=exit_code, report_manifest=caller_inputs.named_manifest(file),
                        current=caller_inputs.current_hashes(self.store.files_worktree,
                                                             {p: e["path"] for p, e in recorded.items()}))
        elif exit_code is not None:
            raise InvalidValue("{opt:exit_code} belongs to the check (`{hint}`)", argument="exit_code",
                               hint=Hint("contract", {"run_id": Placeholder("RUN"), "stage": Placeholder("STAGE"),
                                                      "part": "check", "exit_code": Placeholder("N"),
                                                      "file": Placeholder("F")}))
        return self._do(run_id, "contract", actor, expect=expect, role=role, **args)

    def redo(self, run_id: str, stage: str, *, reason: str, actor: str | None = None,
             expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        return self._do(run_id, "redo", actor, reason, expect=expect, role=role, stage=stage)

    def resume(self, run_id: str, hash: str, *, stage: str | None = None, mode: str | None = None,
               choice: str | None = None, session: str | None = None, actor: str | None = None,
               expect: str | None = None, role: str | None = None) -> dict[str, Any]:
        """Consume reset boundary `hash`; `session` is the resuming session's marker (default
        STATEDIR_SESSION, else one per process)."""
        return self._do(run_id, "resume", actor, expect=expect, role=role, hash=hash, stage=stage, mode=mode, choice=choice,
                        session=session, store_prefix=self._receipt_root())


def untracked_warning(paths: list[str]) -> str:
    """What `material` says of files git does not track."""
    named = ", ".join(paths)
    return said(f"{named} {'is' if len(paths) == 1 else 'are'} not tracked by git: a clone will not hold "
                f"{'it' if len(paths) == 1 else 'them'}, though the passport names the file; `git add` and commit "
                f"{'it' if len(paths) == 1 else 'them'} (or pass {{opt:allow_untracked}} where that is meant)")

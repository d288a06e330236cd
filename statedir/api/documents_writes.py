"""What each writing command hands back (statedir.api.documents' `Document`): the transitions,
the gates, the handoff bus, the signers and the adjudication activity, each one StateDir call
with the command's keyword arguments (its parameters but `store` and `json`). `CALLS` names them
by the command table's `Command.call`."""
# Lazy imports: files.signers_file: each method imports what its own call uses, so a call pays for its own path only
#   (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from statedir.commands.document import Document
from statedir.argument_checks import names_a_file
from statedir.errors import InvalidValue


def new(sd: Any, *, run_id: str, topic: str | None, template: str | None, entry_point: str | None,
        language: str | None, passport: str | None, confirm_skip: bool, file: str | None,
        setting: list[str] | None, entry_material: list[str] | None, actor: str, as_role: str | None,
        expect: str | None) -> Document:
    return Document(sd.new(run_id, topic=topic, template=template, entry_point=entry_point, language=language,
                           passport=passport, confirm_skip=confirm_skip, file=file, settings=setting,
                           entry_materials=entry_material, actor=actor, role=as_role, expect=expect))


def stage(sd: Any, *, run_id: str, stage: str, status: str, mode: str | None, output: list[str] | None,
          decision: str | None, reason: str | None, turns: str | None, session: str | None, actor: str,
          as_role: str | None, expect: str | None) -> Document:
    return Document(sd.stage(run_id, stage, status, mode=mode, outputs=output, decision=decision, reason=reason,
                             turns=turns, session=session, actor=actor, role=as_role, expect=expect))


def output(sd: Any, *, run_id: str, stage: str, output: list[str], actor: str, as_role: str | None,
           expect: str | None) -> Document:
    return Document(sd.output(run_id, stage, output, actor=actor, role=as_role, expect=expect))


def pipeline(sd: Any, *, run_id: str, state: str, reason: str | None, yes: bool, actor: str,
             as_role: str | None, expect: str | None) -> Document:
    return Document(sd.pipeline(run_id, state, reason=reason, actor=actor, role=as_role, expect=expect))


def set_(sd: Any, *, run_id: str, field: str, value: str, reason: str, actor: str, as_role: str | None,
         expect: str | None) -> Document:
    return Document(sd.set(run_id, field, value, reason=reason, actor=actor, role=as_role, expect=expect))


def material(sd: Any, *, run_id: str, names: list[str], file: list[str] | None, origin_skill: str | None,
             origin_mode: str | None, upstream: list[str] | None, allow_untracked: bool, actor: str,
             as_role: str | None, expect: str | None) -> Document:
    return Document(sd.material(run_id, names, files=file, origin_skill=origin_skill, origin_mode=origin_mode,
                                upstream=upstream, actor=actor, role=as_role, expect=expect,
                                allow_untracked=allow_untracked))


def integrity(sd: Any, *, run_id: str, stage: str, verdict: str, refs_total: int, refs_verified: int,
              issues_found: int | None, issues_fixed: int | None, issue: list[str] | None, reason: str | None,
              actor: str, as_role: str | None, expect: str | None) -> Document:
    return Document(sd.integrity(run_id, stage, verdict, refs_total=refs_total, refs_verified=refs_verified,
                                 issues_found=issues_found, issues_fixed=issues_fixed, issues=issue, reason=reason,
                                 actor=actor, role=as_role, expect=expect))


def revision(sd: Any, *, run_id: str, items_total: int, items_addressed: int | None, pending: list[str] | None,
             actor: str, as_role: str | None, expect: str | None) -> Document:
    return Document(sd.revision(run_id, items_total=items_total, items_addressed=items_addressed, pending=pending,
                                actor=actor, role=as_role, expect=expect))


def loop(sd: Any, *, run_id: str, actor: str, as_role: str | None, expect: str | None) -> Document:
    return Document(sd.loop(run_id, actor=actor, role=as_role, expect=expect))


def observe(sd: Any, *, run_id: str, stage: str, checkpoint: str, report: str, actor: str, as_role: str | None,
            expect: str | None) -> Document:
    return Document(sd.observe(run_id, stage, checkpoint, report, actor=actor, role=as_role, expect=expect))


def confirm(sd: Any, *, run_id: str, next: str | None, response: str | None, metric: list[str] | None,
            quality: str | None, format: str | None, decision: str | None, skip_refused: bool, actor: str,
            as_role: str | None, expect: str | None) -> Document:
    return Document(sd.confirm(run_id, next=next, response=response, actor=actor, role=as_role, expect=expect,
                               skip_refused=skip_refused, metrics=metric, quality=quality, format=format,
                               decision=decision))


def redo(sd: Any, *, run_id: str, stage: str, reason: str, actor: str, as_role: str | None,
         expect: str | None) -> Document:
    return Document(sd.redo(run_id, stage, reason=reason, actor=actor, role=as_role, expect=expect))


def resume(sd: Any, *, run_id: str, hash: str, stage: str | None, mode: str | None, choice: str | None,
           session: str | None, actor: str, as_role: str | None, expect: str | None) -> Document:
    return Document(sd.resume(run_id, hash, stage=stage, mode=mode, choice=choice, session=session, actor=actor,
                              role=as_role, expect=expect))


# --- the gates


def resolve(sd: Any, *, run_id: str, stage: str, decision: str, reason: str | None, actor: str,
            as_role: str | None, expect: str | None) -> Document:
    return Document(sd.resolve(run_id, stage, decision, reason=reason, actor=actor, role=as_role, expect=expect))


def contract(sd: Any, *, run_id: str, stage: str, part: str, file: str, exit_code: int | None, actor: str,
             as_role: str | None, expect: str | None) -> Document:
    return Document(sd.contract(run_id, stage, part, file=file, exit_code=exit_code, actor=actor, role=as_role,
                                expect=expect))


def advisory(sd: Any, *, run_id: str, kind: str, file: str | None, unavailable: str | None, actor: str,
             as_role: str | None, expect: str | None) -> Document:
    return Document(sd.advisory(run_id, kind, file=file, unavailable=unavailable, actor=actor, role=as_role,
                                expect=expect))


def compliance(sd: Any, *, run_id: str, stage: str, report: str | None, override: bool, reason: str | None,
               actor: str, as_role: str | None, expect: str | None) -> Document:
    return Document(sd.compliance(run_id, stage, report=report, override=override, reason=reason, actor=actor,
                                  role=as_role, expect=expect))


def inquiry(sd: Any, *, run_id: str, branch: str, note: str, actor: str, as_role: str | None,
            expect: str | None) -> Document:
    return Document(sd.inquiry(run_id, branch=branch, note=note, actor=actor, role=as_role, expect=expect))


def checklist(sd: Any, *, run_id: str, stage: str, item: list[str], evidence: list[str] | None, actor: str,
              as_role: str | None, expect: str | None) -> Document:
    return Document(sd.checklist(run_id, stage, item, evidence=evidence, actor=actor, role=as_role, expect=expect))


def acknowledge(sd: Any, *, run_id: str, stage: str, mode: str, answer: str, reason: str | None, actor: str,
                as_role: str | None, expect: str | None) -> Document:
    return Document(sd.acknowledge_mode(run_id, stage, mode, answer, reason=reason, actor=actor, role=as_role,
                                        expect=expect))


# --- the adjudication activity


def bind(sd: Any, *, run_id: str, family: str, artifact: str | None, role: str | None, group: str | None,
         group_stage: str | None, path: str | None, not_applicable: bool, unavailable: str | None, actor: str,
         expect: str | None) -> Document:
    return Document(sd.bind(run_id, family, artifact=artifact, role=role, group=group, group_stage=group_stage,
                            path=path, not_applicable=not_applicable, unavailable=unavailable, actor=actor,
                            expect=expect))


def seal(sd: Any, *, run_id: str, artifact_root: Path, bindings: str | None, actor: str,
         expect: str | None) -> Document:
    return Document(sd.seal(run_id, artifact_root, bindings=bindings, actor=actor, expect=expect))


# --- the handoff bus


def bus_of(sd: Any, session: str) -> Any:
    """The bus session a command names: its id, or the path of its file (from the current directory)."""
    return sd.bus(str(Path(session).absolute()) if names_a_file("session", session) else session)


def bus_init(sd: Any, *, session: str, clean: Path | None, actor: str, expect: str | None) -> Document:
    return Document(bus_of(sd, session).init(clean=clean.absolute() if clean else None, actor=actor, expect=expect))


def bus_set(sd: Any, *, session: str, field: str, value: str, actor: str, expect: str | None) -> Document:
    return Document(bus_of(sd, session).set(field, value, actor=actor, expect=expect))


def bus_append(sd: Any, *, session: str, field: str, value: str, check_path: bool, actor: str,
               expect: str | None) -> Document:
    return Document(bus_of(sd, session).append(field, value, check_path=check_path, actor=actor, expect=expect))


def bus_get(sd: Any, *, session: str, field: str | None) -> Document:
    return Document(bus_of(sd, session).get(field))


def bus_clear(sd: Any, *, session: str, actor: str, expect: str | None) -> Document:
    return Document(bus_of(sd, session).clear(actor=actor, expect=expect))


# --- the signers


def signers_add(sd: Any, *, bound: str, key: str, actor: str, expect: str | None) -> Document:
    return Document(sd.add_signer(bound, key, actor=actor, expect=expect))


def signers_remove(sd: Any, *, bound: str, key: str | None, actor: str, expect: str | None) -> Document:
    return Document(sd.remove_signer(bound, key, actor=actor, expect=expect))


def signers_list(sd: Any, *, allowed_signers: bool) -> Document:
    """The bound actors and their keys; with `allowed_signers`, git's allowed-signers text."""
    rows = sd.signers()
    if allowed_signers:
        from statedir.files.signers_file import Signers

        return Document(Signers(rows).allowed_signers(), plain=True)
    return Document(rows)


def acknowledgers_named(named: list[str] | None, none: bool) -> None:
    """Refused unless the call names the acknowledging actors or says nobody (checked before the store is opened)."""
    if bool(named) == none:
        raise InvalidValue("name the acknowledging actors, or give {opt:none} for nobody", argument="none")


def signers_acknowledgers(sd: Any, *, named: list[str] | None, none: bool, actor: str,
                          expect: str | None) -> Document:
    acknowledgers_named(named, none)
    return Document(sd.set_acknowledgers(named or [], actor=actor, expect=expect))


CALLS: dict[str, Callable[..., Document]] = {
    "new": new, "stage": stage, "output": output, "pipeline": pipeline, "set": set_, "material": material,
    "integrity": integrity, "revision": revision, "loop": loop, "observe": observe, "confirm": confirm,
    "redo": redo, "resume": resume, "resolve": resolve, "contract": contract, "advisory": advisory,
    "compliance": compliance, "inquiry": inquiry, "checklist": checklist, "acknowledge": acknowledge,
    "bind": bind, "seal": seal, "bus_init": bus_init, "bus_set": bus_set, "bus_append": bus_append,
    "bus_get": bus_get, "bus_clear": bus_clear, "signers_add": signers_add, "signers_remove": signers_remove,
    "signers_list": signers_list, "signers_acknowledgers": signers_acknowledgers}

"""The re-review contract a template declares (`re_review_contract:`): before the contract stage's
decision, a hash-bound input manifest, the phase artifacts in order, each bound to its file's
SHA-256 and the manifest's, then the synthesis check's result. Pure, like rules.py; no stage,
part or code is named here: the template lists them."""
from __future__ import annotations

from typing import Any

from statedir.engine import run_settings, traceability
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, Request, RunData, RunDraft, active_current
from statedir.errors import ContentChanged, ContractIncomplete, IllegalTransition, InvalidValue
from statedir.hints import HINT, HINT2, Hint, Placeholder, opt

CHECK = "check"


def declared(t: Template) -> dict[str, Any] | None:
    return t.doc.get("re_review_contract")


def applies(t: Template, state: dict[str, Any], stage_id: str) -> dict[str, Any] | None:
    """The contract of `stage_id` where the run is held to it (None: no contract, or the legacy setting)."""
    spec = declared(t)
    if not spec or spec["stage"] != stage_id:
        return None
    legacy = run_settings.setting_for(t, "re_review_legacy")
    return None if legacy and run_settings.on(t, state, legacy) else spec


def record(t: Template, run: RunData, req: Request, now: str, stage_id: str | None) -> Change:
    """`contract RUN STAGE PART --file F`, or `contract RUN STAGE check --exit-code N --file REPORT`."""
    assert stage_id is not None
    spec = declared(t)
    if not spec or spec["stage"] != stage_id:
        raise InvalidValue(f"stage {t.display(stage_id)} has no re-review contract"
                           + (f"; the contract is stage {t.display(spec['stage'])}'s" if spec else ""), stage=stage_id)
    if applies(t, run.state, stage_id) is None:
        raise IllegalTransition(f"this run was made with the setting re_review_legacy: stage {t.display(stage_id)} "
                                "runs without the contract (marked [LEGACY-NO-CONTRACT]); set its decision directly",
                                stage=stage_id)
    active_current(t, run, stage_id, "the re-review contract")
    part, parts = req.args.get("part"), list(spec["parts"])
    if part not in [*parts, CHECK]:
        raise InvalidValue(f"unknown contract part {part!r}; use one of {', '.join([*parts, CHECK])}", part=part,
                           allowed=[*parts, CHECK])
    draft = RunDraft(run)
    rec = draft.stage(stage_id)
    contract = dict(rec.get("contract") or {})
    file = req.args.get("file") or {}
    if not file.get("content_hash"):
        raise InvalidValue("give the part's file ({opt:file})", argument="file")
    done = [p for p in parts if p in contract]
    if CHECK in contract and contract[CHECK]["outcome"] == "pass":
        raise IllegalTransition(f"the contract of stage {t.display(stage_id)} holds already (its check passed)")
    if CHECK in contract and spec.get("failed_check_final"):  # the failed check stands: the decision is the user's
        failed = contract[CHECK]
        raise IllegalTransition(f"the synthesis check of stage {t.display(stage_id)} failed ({failed['outcome']}, exit "
                                f"{failed['exit_code']}) and stands: its decision is the user's (stage "
                                f"{t.display(stage_id)} completed with its decision {rec.get('decision')}, then the "
                                "user's answer at its checkpoint); no other check is recorded after it",
                                stage=stage_id, outcome=failed["outcome"])
    if part == CHECK:
        return _check(t, draft, rec, contract, req, now, stage_id, spec, file)
    expected = parts[len(done)] if len(done) < len(parts) else None
    if part != expected:
        raise IllegalTransition(f"contract part {part} is out of order: "
                                + (f"next is {expected}" if expected else "every part is recorded; next is the check")
                                + f" ({' -> '.join([*parts, CHECK])})", part=part, expected=expected or CHECK)
    entry = {"path": file["path"], "sha256": file["content_hash"], "at": now}
    if part != parts[0]:
        entry["manifest_sha256"] = contract[parts[0]]["sha256"]
    contract[part] = entry
    rec["contract"] = contract
    return draft.change(f"contract {t.display(stage_id)} {part} ({file['content_hash'][:12]})", now, part=part,
                        sha256=file["content_hash"])


def _check(t: Template, draft: RunDraft, rec: dict[str, Any], contract: dict[str, Any], req: Request, now: str,
           stage_id: str, spec: dict[str, Any], file: dict[str, str]) -> Change:
    parts = list(spec["parts"])
    missing = [p for p in parts if p not in contract]
    if missing:
        raise IllegalTransition(f"the synthesis check comes after every part; missing: {', '.join(missing)}",
                                missing=missing)
    codes = {int(k): v for k, v in spec["check_codes"].items()}
    code = req.args.get("exit_code")
    if code is None:
        raise InvalidValue(f"the synthesis check needs its exit code: {opt('exit_code')} N, one of "
                           f"{', '.join(map(str, codes))}", exit_code=None, allowed=sorted(codes))
    if code not in codes:
        raise InvalidValue(f"{opt('exit_code')} {code!r} is not one the check gives ({', '.join(map(str, codes))})",
                           exit_code=code, allowed=sorted(codes))
    current = req.args.get("current") or {}
    changed = [p for p in parts if current.get(p) != contract[p]["sha256"]]
    if changed:
        raise ContentChanged(f"the file of contract part {', '.join(changed)} has changed since it was recorded "
                             "(its SHA-256 differs): record the contract again from its manifest", parts=changed)
    named = req.args.get("report_manifest")
    if named is not None and named != contract[parts[0]]["sha256"]:
        raise IllegalTransition(f"the check's report is against another manifest ({str(named)[:12]}...; the "
                                f"contract's is {contract[parts[0]]['sha256'][:12]}...)", manifest=named)
    meaning = codes[code]
    outcome = str(meaning["outcome"])
    contract[CHECK] = {"path": file["path"], "sha256": file["content_hash"], "exit_code": code, "outcome": outcome,
                       "manifest_sha256": contract[parts[0]]["sha256"], "at": now}
    rec["contract"] = contract
    then = meaning.get("then")
    summary = f"contract {t.display(stage_id)} check: {outcome} (exit {code})"
    if then == "abort":  # fail-closed: the run ends, the check's reason recorded
        draft.state.update(pipeline_state=t.pipeline["aborted"], paused_from=None, checkpoint=None)
        rec["reason"] = f"re-review contract check failed: {outcome} (exit {code})"
        summary += "; pipeline aborted (fail-closed)"
    elif then:
        rec["decision"] = then  # the decision is the user's now
        summary += f"; decision {then}: the user decides"
    traceability.bind(t, draft)  # the contract's files bound to the row, statedir's own binding
    return draft.change(summary, now, outcome=outcome, **({"then": then} if then else {}))


def require_check(t: Template, state: dict[str, Any], record_: dict[str, Any], decision: str) -> None:
    """A decision on the contract stage only after its passing check; after a failing one, only the
    user's deferred decision (CONTRACT_INCOMPLETE otherwise)."""
    spec = applies(t, state, record_["id"])
    if spec is None:
        return
    check = (record_.get("contract") or {}).get(CHECK)
    if check is None or (check["outcome"] != "pass" and decision != record_.get("decision")):
        parts = [p for p in spec["parts"] if p not in (record_.get("contract") or {})]
        needs = (f"the parts {', '.join(parts)} then the check" if parts else "the synthesis check") if check is None \
            else "the user's answer to the failed check (its decision stays " + str(record_.get("decision")) + ")"
        current = record_["status"] == t.status["active"]  # what it needs, where it is the stage at work
        run, shown = Placeholder("RUN"), t.display(record_["id"])
        stage = record_["id"]  # a step names the stage by its id (3p), as `next` and every tool's enum do
        hint = [Hint("contract", {"run_id": run, "stage": stage, "part": Placeholder("...")})] if check is None else \
            [Hint("stage", {"run_id": run, "stage": stage, "status": "completed", "decision": str(record_.get("decision"))}),
             Hint("confirm", {"run_id": run, "decision": Placeholder("...")})]
        how = f"`{HINT}`" if check is None else f"`{HINT}`, then the user's `{HINT2}`"
        raise ContractIncomplete(f"stage {shown}'s decision needs its re-review contract: {needs} ({how})",
                                 stage=record_["id"], **({"needs": [needs]} if current else {}), hint=hint)

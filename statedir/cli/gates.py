"""The integrity gates' user answers (`resolve`), the re-review contract, the Stage 5 entry advisories and compliance reports."""
from __future__ import annotations

from typing import Annotated, Optional

from statedir.cli import completion
from statedir.cli.common import (
    DEFAULT_ACTOR,
    ActorOpt,
    ExpectOpt,
    JsonOpt,
    RoleOpt,
    RunArg,
    StoreOpt,
    document,
    open_store,
)
from statedir.cli.registry import app
from statedir.cli.render import done
from statedir.commands.params import Argument, Option


@app.command()
def resolve(run_id: RunArg,
            stage: Annotated[str, Argument(help="The integrity stage whose FAIL rounds are used up.",
                                           autocompletion=completion.stage_ids)],
            decision: Annotated[str, Argument(help="The user's decision, one the template lists (academic-pipeline: handle_manually, remove_unverifiable: one more check; continue_unverified: the stage completes, partially unverified).")],
            reason: Annotated[Optional[str], Option("--reason", help="Why; the override ladder of the run and stage decides whether it is needed (academic-pipeline: the 1st may omit it, the 2nd needs one, the 3rd and later at least 100 characters).")] = None,
            store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
            expect: ExpectOpt = None) -> None:
    """Record the user's FAIL-loop resolution after an integrity stage's retry cap.

    The user's answer (--actor user at a terminal, or relayed by the orchestrator), recorded as the
    user's either way. Its entry in the integrity history carries the decision, the reason and the
    last check's open issues (unresolved_items), which stay visible on the stage, the draft's
    passport, the dashboard and `show --format ars`. Refused before the cap is reached.
    """
    done(document("resolve", open_store(store), locals()).value, json)


@app.command()
def contract(run_id: RunArg,
             stage: Annotated[str, Argument(help="The stage held to the re-review contract (academic-pipeline: 3p).",
                                            autocompletion=completion.stage_ids)],
             part: Annotated[str, Argument(help="manifest, criteria, evidence, claims (in that order), then check.")],
             file: Annotated[str, Option("--file", help="The part's file, or the check's report (inside the repository).")],
             exit_code: Annotated[Optional[int], Option("--exit-code", help="The synthesis check's exit code (0 pass, 1 synthesis mismatch, 2 manifest invalid).")] = None,
             store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
             as_role: RoleOpt = None, expect: ExpectOpt = None) -> None:
    """Record a part of the re-review contract, or its synthesis check.

    Before stage 3' can take a decision: the input manifest, then the phase artifacts criteria,
    evidence and claims, each bound to its file's SHA-256 and the manifest's, then the check
    (`check --exit-code N --file REPORT`). A decision before a passing check is
    CONTRACT_INCOMPLETE; a part out of order, a part's file changed by the check, or a report
    naming another manifest (manifest_sha256) is refused. A failing check hands the decision to
    the user (user_review_required) or aborts the run fail-closed, as the template says.
    """
    done(document("contract", open_store(store), locals()).value, json)


@app.command()
def advisory(run_id: RunArg,
             kind: Annotated[str, Argument(help="tortured_phrase, then cross_document (academic-pipeline); claim_audit where the run's claim_audit setting is on.")],
             file: Annotated[Optional[str], Option("--file", help="The advisory's report (inside the repository); a claim_audit report names its classes (classes: {CLASS: SEVERITY}).")] = None,
             unavailable: Annotated[Optional[str], Option("--unavailable", help="Why no report exists, a code (capitals, digits, _), recorded as ADVISORY_UNAVAILABLE:CODE.")] = None,
             store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
             as_role: RoleOpt = None, expect: ExpectOpt = None) -> None:
    """Record a Stage 5 entry advisory, bound to the accepted draft.

    After stage 4.5's PASS on the current, VERIFIED draft: tortured_phrase first, then
    cross_document, each bound to the draft's version label and SHA-256 (both must name the same
    draft). They never gate, block or change a verdict; a new draft version makes them STALE, and
    they are recorded again once it has passed integrity. With the claim_audit setting, 4.5 -> 5
    needs a claim_audit result for the current draft without a HIGH-WARN class.
    """
    done(document("advisory", open_store(store), locals()).value, json)


@app.command()
def compliance(run_id: RunArg,
               stage: Annotated[str, Argument(help="The integrity stage the report is for (academic-pipeline: 2.5 or 4.5).",
                                              autocompletion=completion.stage_ids)],
               report: Annotated[Optional[str], Option("--report", help="The compliance report, JSON (schemas/compliance-report.schema.json), inside the repository.")] = None,
               override: Annotated[bool, Option("--override", help="The user's acknowledgement of the stage's blocking report (the override ladder decides whether --reason is needed).")] = False,
               reason: Annotated[Optional[str], Option("--reason", help="Why the block is overridden (with --override).")] = None,
               store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
               as_role: RoleOpt = None, expect: ExpectOpt = None) -> None:
    """Record a compliance report (PRISMA-trAIce + RAISE), or the user's answer to a blocking one.

    The report (actor compliance_agent) is checked against the template's schema and appended to
    the current draft's passport (compliance_history); its decision is the most severe of the
    frameworks' and the overall decision, capped at warn unless stage 1 ran in systematic-review
    mode. A block keeps the stage from completing until the user acknowledges it (--override,
    under the override ladder); from the 3rd round on an entry records its resolution_path. The
    report is bound to the compliance_report adjudication row by statedir, and the user's
    acknowledgement of a block written as its action receipt and bound beside it.
    """
    done(document("compliance", open_store(store), locals()).value, json)


@app.command()
def inquiry(run_id: RunArg,
            branch: Annotated[str, Option("--branch", help="The branch of the inquiry (letters, digits, ._-).")],
            note: Annotated[str, Option("--note", help="What the branch holds or why it was opened (at most 2000 characters).")],
            store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
            as_role: RoleOpt = None, expect: ExpectOpt = None) -> None:
    """Append a note to the run's inquiry branch ledger (a run made with --setting inquiry_ledger=true).

    Append-only; the ledger is published (show, the ARS export, the dashboard) from its second
    branch on and summarized only at the Stage 1, 2.5 and 4.5 checkpoints; it never changes a
    verdict or a checkpoint's requirement.
    """
    done(document("inquiry", open_store(store), locals()).value, json)

"""`statedir research`: research-lab-skills' `state.py` action and value flags, unchanged.

Every action but --report prints JSON on stdout (at a terminal without --json: the same as words,
statedir.cli.research_text), a failure included, in `state.py`'s flat
shape `{"error": "<CODE>", "message": ...}` with statedir's exit codes: flag errors that
click finds before the callback runs are caught by the command class below.
"""
# Lazy imports: api.research_call, cli.common, cli.render, cli.research_text, typer, typer.core: imported by the
#   command that uses them: `statedir COMMAND` loads this module for any of its commands, and a plain call loads no
#   typer (docs/cli-startup.md).
from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

from statedir.api.research_call import ARTIFACT_ROLES
from statedir.cli.common import ExpectOpt, StoreOpt
from statedir.cli.registry import app
from statedir.commands import table
from statedir.commands.params import Option
from statedir.errors import InvalidValue, StatedirError

Flag = bool
Text = Optional[str]


def _fail(failed: Any, report: bool, json: bool) -> table.Exit:
    """Print `state.py`'s flat error `failed` (a Document: stdout JSON; a --report without --json: a stderr line)."""
    from statedir.cli import render

    if report and not json:
        sys.stderr.write(f"error: {failed.value['message']} [{failed.value['error']}]\n")
    else:
        render.emit_json(failed.value)
    return table.Exit(failed.code)


def _refused(exc: StatedirError, args: list[str]) -> table.Exit:
    """A refusal of the command line's own (a flag click or argparse refuses), printed flat."""
    from statedir.api.research_call import flat

    return _fail(flat(exc), "--report" in args, "--json" in args)


def _flat_errors() -> type:
    """typer's command class for research, made when typer reads a call (the MCP server calls
    statedir.api.research_call): bad flags (unknown, missing a value) are reported in the command's own shape."""
    import typer
    from typer.core import TyperCommand

    class FlatErrors(TyperCommand):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            _no_flag_as_value(args)
            try:
                return super().parse_args(ctx, args)
            except typer.TyperException as exc:  # click's usage errors, through typer's public base
                message = exc.format_message().strip().replace("\n", " ")
                raise _refused(InvalidValue(message), args) from None

    return FlatErrors


_flat_errors.errors_only = True  # type: ignore[attr-defined]  # a call it does not refuse reads as without it


def _no_flag_as_value(args: list[str]) -> None:
    """`--skill --json` is a missing value, as argparse (`state.py`'s parser) says, not the skill "--json"."""
    options = [p for p in table.parameters(research) if p.kind == "option"]
    names = {flag for p in options for flag in (*p.flags, *p.off_flags)}
    takes_value = {flag for p in options if not p.flag for flag in p.flags}
    for flag, value in zip(args, args[1:], strict=False):
        if flag in takes_value and value in names:
            raise _refused(InvalidValue(f"Option '{flag}' requires an argument."), args)


@app.command(cls=_flat_errors)
def research(
    create_project: Annotated[Flag, Option("--create-project", help="Action: register a Project (--name, --description).")] = False,
    create_question: Annotated[Flag, Option("--create-question", help="Action: register a Question (--question, --project-id) without a Run.")] = False,
    start_run: Annotated[Flag, Option("--start-run", help="Action: start a Run (--skill; at most one of --question/--question-id, --hypothesis-id, --experiment-id).")] = False,
    complete_run: Annotated[Flag, Option("--complete-run", help="Action: close a Run (--run-id, --status completed|failed).")] = False,
    answer_question: Annotated[Flag, Option("--answer-question", help="Action: mark a Question answered (--question-id).")] = False,
    abandon_question: Annotated[Flag, Option("--abandon-question", help="Action: mark a Question abandoned (--question-id).")] = False,
    record_result: Annotated[Flag, Option("--record-result", help="Action: record an immutable Result (--run-id, --summary, --artifact-role with --artifact-path).")] = False,
    record_claim: Annotated[Flag, Option("--record-claim", help="Action: record an immutable Claim (--run-id, --statement, --confidence, --evidence, --evidence-id).")] = False,
    create_hypothesis: Annotated[Flag, Option("--create-hypothesis", help="Action: declare a Hypothesis (--question-id, --statement).")] = False,
    set_hypothesis_status: Annotated[Flag, Option("--set-hypothesis-status", help="Action: --hypothesis-id, --status supported|refuted|inconclusive.")] = False,
    create_experiment: Annotated[Flag, Option("--create-experiment", help="Action: declare an Experiment (--hypothesis-id, --description).")] = False,
    set_experiment_status: Annotated[Flag, Option("--set-experiment-status", help="Action: --experiment-id, --status running|completed|failed.")] = False,
    create_source: Annotated[Flag, Option("--create-source", help="Action: register a Source (--title ...); an exact --doi, then normalized --url match returns the existing one.")] = False,
    set_source_screening: Annotated[Flag, Option("--set-source-screening", help="Action: --source-id, --screening-status, --exclusion-reason.")] = False,
    set_source_evidence_tier: Annotated[Flag, Option("--set-source-evidence-tier", help="Action: --source-id, --evidence-tier.")] = False,
    create_evidence: Annotated[Flag, Option("--create-evidence", help="Action: an Evidence Statement (--source-id, --question-id, --statement, --stance).")] = False,
    query: Annotated[Flag, Option("--query", help="Action: exactly one of --run-id --question-id --project-id --hypothesis-id --experiment-id --source-id --skill --since; the record and its children.")] = False,
    validate: Annotated[Flag, Option("--validate", help="Action: list dangling references (repairs nothing).")] = False,
    rebuild_index: Annotated[Flag, Option("--rebuild-index", help="Action: bring the SQLite index up to date (--full: reread every file).")] = False,
    report: Annotated[Flag, Option("--report", help="Action: plain-text summary of Runs (--since).")] = False,
    skill: Annotated[Text, Option("--skill", metavar="NAME", help="The skill acting (a Run's skill; created_by elsewhere).")] = None,
    mode: Annotated[Text, Option("--mode", metavar="MODE", help="The Run's mode within its skill.")] = None,
    name: Annotated[Text, Option("--name", metavar="TEXT", help="Project name.")] = None,
    description: Annotated[Text, Option("--description", metavar="TEXT", help="Project or Experiment description.")] = None,
    title: Annotated[Text, Option("--title", metavar="TEXT", help="Source title.")] = None,
    authors: Annotated[Text, Option("--authors", metavar="TEXT", help='Source authors, e.g. "Ng T, Osei K".')] = None,
    year: Annotated[Text, Option("--year", metavar="YEAR", help="Source publication year.")] = None,
    doi: Annotated[Text, Option("--doi", metavar="TEXT", help="Source DOI (exact-match dedup).")] = None,
    url: Annotated[Text, Option("--url", metavar="TEXT", help="Source URL (normalized-match dedup).")] = None,
    venue: Annotated[Text, Option("--venue", metavar="TEXT", help="Source journal, conference or publisher.")] = None,
    evidence_tier: Annotated[Text, Option("--evidence-tier", metavar="TEXT", help='Evidence grade, e.g. "Level II - RCT".')] = None,
    screening_status: Annotated[Text, Option("--screening-status", metavar="included|excluded|pending", help="Source screening decision.")] = None,
    exclusion_reason: Annotated[Text, Option("--exclusion-reason", metavar="TEXT", help="Why a Source was excluded.")] = None,
    stance: Annotated[Text, Option("--stance", metavar="supports|refutes|mixed", help="Evidence stance toward the Question.")] = None,
    limitations: Annotated[Text, Option("--limitations", metavar="TEXT", help="Evidence limitations.")] = None,
    uncertainty_note: Annotated[Text, Option("--uncertainty-note", metavar="TEXT", help="Evidence uncertainty note.")] = None,
    evidence_id: Annotated[Text, Option("--evidence-id", metavar="ID", help="An Evidence record a Claim rests on (must exist).")] = None,
    question: Annotated[Text, Option("--question", metavar="TEXT", help="A new Question's text.")] = None,
    question_id: Annotated[Text, Option("--question-id", metavar="ID", help="An existing Question.")] = None,
    project_id: Annotated[Text, Option("--project-id", metavar="ID", help="An existing Project (default: proj_default, made when first needed).")] = None,
    hypothesis_id: Annotated[Text, Option("--hypothesis-id", metavar="ID", help="An existing Hypothesis.")] = None,
    experiment_id: Annotated[Text, Option("--experiment-id", metavar="ID", help="An existing Experiment.")] = None,
    source_id: Annotated[Text, Option("--source-id", metavar="ID", help="An existing Source.")] = None,
    run_id: Annotated[Text, Option("--run-id", metavar="ID", help="An existing Run.")] = None,
    status: Annotated[Text, Option("--status", metavar="STATUS", help="completed failed running supported refuted inconclusive (per action).")] = None,
    summary: Annotated[Text, Option("--summary", metavar="TEXT", help="What a Result produced.")] = None,
    artifact_role: Annotated[Text, Option("--artifact-role", metavar="ROLE", help=f"Where a Result's artifact lives, a resource-resolver role: {', '.join(ARTIFACT_ROLES)} (another role of the resolver's is taken too).")] = None,
    artifact_path: Annotated[Text, Option("--artifact-path", metavar="PATH", help="The artifact's path relative to that role.")] = None,
    statement: Annotated[Text, Option("--statement", metavar="TEXT", help="Hypothesis, Evidence or Claim text.")] = None,
    confidence: Annotated[Text, Option("--confidence", metavar="low|medium|high", help="A Claim's confidence.")] = None,
    evidence: Annotated[Text, Option("--evidence", metavar="TEXT", help="A Claim's supporting reference (stored as evidence_ref).")] = None,
    since: Annotated[Text, Option("--since", metavar="DATE", help="ISO date or date-time: Runs started then or later.")] = None,
    full: Annotated[Flag, Option("--full", help="With --rebuild-index: reread every research file.")] = False,
    store: StoreOpt = None,
    json: Annotated[Flag, Option("--json", help="JSON on stdout at a terminal too (a pipe always gets JSON; a terminal without it, the same as words).")] = False,
    actor: Annotated[Text, Option("--actor", envvar="STATEDIR_ACTOR", show_envvar=True, help="Commit author; default: --skill, else user.")] = None,
    expect: ExpectOpt = None,
) -> None:
    """The research ledger: research-lab-skills' agent-state (state.py) actions, unchanged (exactly one action flag per call).

    `statedir init` once makes the store the ledger lives in."""
    values = dict(locals())
    from statedir.api.research_call import research_on
    from statedir.cli import render
    from statedir.cli.common import open_store

    answer = research_on(lambda: open_store(store), values)
    if answer.code:
        raise _fail(answer, report, json)
    if answer.plain:
        render.say(answer.value)
    elif not json and sys.stdout.isatty():  # a person: words, not JSON
        from statedir.cli.research_text import readable

        render.say(readable(answer.value))
    else:
        render.emit_json(answer.value)

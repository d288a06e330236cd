"""Mutating commands: each parses its options, calls one StateDir method, prints the result."""
# Lazy imports: sys, typer: imported by the command that uses them: `statedir COMMAND` loads this module for any of
#   its commands, and a plain call loads no typer (docs/cli-startup.md).
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
    StageArg,
    StoreOpt,
    document,
    open_store,
)
from statedir.cli.registry import app
from statedir.cli.render import done
from statedir.commands.params import Argument, Option

Session = Annotated[Optional[str], Option("--session", envvar="STATEDIR_SESSION", help="This session's marker, named by the reset-boundary entries it writes (default: STATEDIR_SESSION, else one per process).")]
Reason = Annotated[Optional[str], Option("--reason", help="Why (recorded in the transition log).")]


@app.command()
def new(run_id: RunArg,
        topic: Annotated[Optional[str], Option("--topic", help="What the run is about (academic-pipeline needs one).")] = None,
        template: Annotated[Optional[str], Option(
            "--template", help="Template name or file; default: the store's default (academic-pipeline).")] = None,
        entry_point: Annotated[Optional[str], Option(
            "--entry-point", help="Stage to enter at (mid-entry); default: the first.")] = None,
        language: Annotated[Optional[str], Option("--language", help="Language code (en).")] = None,
        passport: Annotated[Optional[str], Option(
            "--passport", help="A VERIFIED passport letting mid-entry pass an integrity stage.")] = None,
        confirm_skip: Annotated[bool, Option(
            "--confirm-skip", help="The user confirms skipping an integrity stage on that passport.")] = False,
        file: Annotated[Optional[str], Option(
            "--file", help="The file the passport stands for (mid-entry): its SHA-256 must equal the passport's content_hash.")] = None,
        setting: Annotated[Optional[list[str]], Option(
            "--setting", help="KEY=true|false (repeatable).")] = None,
        entry_material: Annotated[Optional[list[str]], Option(
            "--entry-material", help="A file the user brings that the entry stage registers at entry, as the "
            "material the template names (academic-pipeline, entering at 4: the reviewer comments, as "
            "review_reports); repeatable, in the template's order.")] = None,
        store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
        expect: ExpectOpt = None) -> None:
    """Create a run.

    Run settings (--setting KEY=VALUE) are the template's opt-in switches: recorded in state.yaml,
    shown by `statedir status`, and never changed afterwards (IMMUTABLE_FIELD). A key the template
    does not know, or a value that is not true or false, is refused (INVALID_VALUE, with the list).
    """
    done(document("new", open_store(store), locals()).value, json)


@app.command()
def stage(run_id: RunArg,
          stage: StageArg,
          status: Annotated[str, Argument(help="A status of the run's template (`statedir templates NAME` lists them and their moves).",
                                                autocompletion=completion.statuses)],
          mode: Annotated[Optional[str], Option("--mode", help="The stage's mode.")] = None,
          output: Annotated[Optional[list[str]], Option("--output", help="An output to record, e.g. the name of a material the stage produced (repeatable).")] = None,
          decision: Annotated[Optional[str], Option("--decision", help="A decision, on a stage whose template declares decisions.")] = None,
          reason: Reason = None,
          turns: Annotated[Optional[str], Option("--turns", help='Dialogue turn range "#A..#B".')] = None,
          session: Session = None, store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
          as_role: RoleOpt = None,
          expect: ExpectOpt = None) -> None:
    """Update a stage's status and details.

    Stage ids, statuses, the moves between them and which stages take --decision are the run's
    template's own: `statedir templates NAME` shows them. Setting a stage to the status it already
    has (with nothing else to change) is a no-op that says so, not an error.
    """
    done(document("stage", open_store(store), locals()).value, json)


@app.command("output")
def output_(run_id: RunArg, stage: Annotated[str, Argument(help="The stage the outputs belong to.", autocompletion=completion.stage_ids)],
            output: Annotated[list[str], Option("--output", help="An output, e.g. the name of a material produced (repeatable).")],
            store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
            expect: ExpectOpt = None) -> None:
    """Record a sub-skill's own stage outputs (a template holding each name once, outputs_once, adds only
    new names; none new: nothing changes, no commit)."""
    done(document("output", open_store(store), locals()).value, json)


@app.command()
def pipeline(run_id: RunArg, state: Annotated[str, Argument(help="A pipeline state of the run's template: its paused, running (resume), aborted or completed state.",
                                                               autocompletion=completion.pipeline_states)],
             reason: Reason = None, yes: Annotated[bool, Option(
                 "--yes", "-y", help="Abort without asking (a terminal is asked to confirm).")] = False,
             store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
             expect: ExpectOpt = None) -> None:
    """Change the pipeline state: pause, resume, abort. Aborting ends the run for good: it needs
    --reason, and at a terminal asks first."""
    import sys

    given, sd = dict(locals()), open_store(store)
    if state == "aborted" and reason and not yes and not json and sys.stdin.isatty() and sys.stdout.isatty():
        import typer

        typer.confirm(f"Abort run {run_id} for good? Nothing undoes it", abort=True)
    done(document("pipeline", sd, given).value, json)


@app.command("set")
def set_(run_id: RunArg, field: Annotated[str, Argument(help="topic, language, team.<role>, settings.reset_boundaries, stages.<stage>.assigned_to|team_notes.")],
         value: Annotated[str, Argument(help="The new value.")],
         reason: Annotated[str, Option("--reason", help="Why (required).")],
         store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
         expect: ExpectOpt = None) -> None:
    """Change a run-level field: topic, language, team.*, settings.*."""
    done(document("set", open_store(store), locals()).value, json)


@app.command()
def material(run_id: RunArg, names: Annotated[list[str], Argument(help="Material names of one version series.")],
             file: Annotated[Optional[list[str]], Option("--file", help="The artifact file (hashed; repeatable).")] = None,
             origin_skill: Annotated[Optional[str], Option("--origin-skill", help="Skill that made it.")] = None,
             origin_mode: Annotated[Optional[str], Option("--origin-mode", help="Mode it was made in.")] = None,
             upstream: Annotated[Optional[list[str]], Option("--upstream", help="Version label it depends on (repeatable).")] = None,
             allow_untracked: Annotated[bool, Option("--allow-untracked", help="An artifact git does not track is meant (no warning that a clone will not hold it).")] = False,
             store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
             expect: ExpectOpt = None) -> None:
    """Register the next version of a material; prints its version label.

    A file git does not track is registered with a warning: a clone will not hold it, though its
    passport names it (`git add` and commit it, or --allow-untracked where that is meant).
    """
    done(document("material", open_store(store), locals()).value, json)


@app.command()
def integrity(run_id: RunArg, stage: Annotated[str, Argument(help="An integrity stage of the run's template (academic-pipeline: 2.5, 4.5).",
                                                                    autocompletion=completion.stage_ids)],
              verdict: Annotated[str, Argument(help="PASS, PASS_WITH_NOTES or FAIL.")],
              refs_total: Annotated[int, Option("--refs-total", help="References checked.")],
              refs_verified: Annotated[int, Option("--refs-verified", help="References verified.")],
              issues_found: Annotated[Optional[int], Option("--issues-found", help="Issues found.")] = None,
              issues_fixed: Annotated[Optional[int], Option("--issues-fixed", help="Issues fixed.")] = None,
              issue: Annotated[Optional[list[str]], Option("--issue", help="SEVERITY:TYPE:DESCRIPTION (repeatable).")] = None,
              reason: Annotated[Optional[str], Option("--reason", help="Why (logged); on a run of a template version before `resolve`, the user's free-text decision after the FAIL cap.")] = None,
              store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
              expect: ExpectOpt = None) -> None:
    """Record an integrity check (actor integrity_verification).

    A stage takes a limited number of FAIL rounds (the template's retry cap: 3 in academic-pipeline);
    after the cap a further check is refused (LIMIT_REACHED) until the user's FAIL-loop resolution
    (`statedir resolve`): handle_manually or remove_unverifiable allow one more check,
    continue_unverified lets the stage complete, partially unverified.
    """
    done(document("integrity", open_store(store), locals()).value, json)


@app.command()
def revision(run_id: RunArg, items_total: Annotated[int, Option("--items-total", help="Roadmap items.")],
             items_addressed: Annotated[Optional[int], Option("--items-addressed", help="Items addressed.")] = None,
             pending: Annotated[Optional[list[str]], Option("--pending", help="An item still pending (repeatable).")] = None,
             store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
             expect: ExpectOpt = None) -> None:
    """Record the revision round of the current revision stage."""
    done(document("revision", open_store(store), locals()).value, json)


@app.command()
def loop(run_id: RunArg, store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
expect: ExpectOpt = None) -> None:
    """Increment the revision loop counter (capped)."""
    done(document("loop", open_store(store), locals()).value, json)


@app.command()
def observe(run_id: RunArg, stage: Annotated[str, Option("--stage", help="Stage id, or 'pipeline'.")],
            checkpoint: Annotated[str, Option("--checkpoint", help="FULL, SLIM or pipeline_completion.")],
            report: Annotated[str, Option("--report", help="The observer report, a YAML or JSON file: a mapping "
                                                "with advisory_only: true and at most timestamp (UTC ISO 8601; default now), "
                                                "dialogue_log_ref, zone, scores (a mapping), cross_model_divergence; on a cross_model run model_scores {MODEL: {DIMENSION: SCORE}} instead.")],
            store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
            expect: ExpectOpt = None) -> None:
    """Append an advisory observer report (actor collaboration_depth_agent).

    The report file, e.g.:

    \b
        advisory_only: true
        zone: productive
        scores: {depth: 4, independence: 3}

    Any other key is refused; observer reports are never taken at MANDATORY checkpoints.
    """
    done(document("observe", open_store(store), locals()).value, json)


@app.command()
def confirm(run_id: RunArg,
            next: Annotated[Optional[str], Option("--next", help="Next stage, completed or aborted, where the graph offers a choice.")] = None,
            response: Annotated[Optional[str], Option("--response", help="The user's answer (the template's responses; default continue): continue goes on; just-continue goes on and makes later checkpoints SLIM; review goes on after the user reviewed the work, so checkpoints are FULL again and the continue count restarts; done ends the run at its terminal acknowledgement. A MANDATORY checkpoint needs an explicit one.")] = None,
            metric: Annotated[Optional[list[str]], Option("--metric", help="A FULL checkpoint's dashboard metric, KEY=VALUE (word_count=N, references=N, coverage=N/T); repeatable.")] = None,
            quality: Annotated[Optional[str], Option("--quality", help="Is this stage's output at least as good as the last? ok, regressed (pauses the pipeline until the user answers) or not_comparable.")] = None,
            format: Annotated[Optional[str], Option("--format", help="At the Stage 5 entry checkpoint: the finalization format, a citation style the template lists (apa7, ...).")] = None,
            decision: Annotated[Optional[str], Option("--decision", help="Where the stage left its decision to the user (stage 3' completed with user_review_required): the user's pick, accept, minor_revision or major_revision; the next stage follows from it.")] = None,
            skip_refused: Annotated[bool, Option("--skip-refused", help="The answer follows a refused attempt to skip this MANDATORY checkpoint: its receipt records skip_refused.")] = False,
            store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
            expect: ExpectOpt = None) -> None:
    """Answer the open checkpoint and start the next stage.

    Warns (also in --json, under "warnings") when the next stage's recommended materials are
    missing, as `prereq` does; a refused --next names the stages the graph offers.
    """
    done(document("confirm", open_store(store), locals()).value, json)


@app.command()
def redo(run_id: RunArg, stage: Annotated[str, Argument(help="The completed stage to reopen.", autocompletion=completion.stage_ids)],
         reason: Annotated[str, Option("--reason", help="Why (required).")],
         store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
         expect: ExpectOpt = None) -> None:
    """Reopen a completed stage and bump its outputs' versions.

    Later stages that had started go back to their initial status; the result names them.
    """
    done(document("redo", open_store(store), locals()).value, json)


@app.command()
def resume(run_id: RunArg, hash: Annotated[str, Argument(help="The 12-hex boundary hash.")],
           stage: Annotated[Optional[str], Option("--stage", help="Override the next stage.")] = None,
           mode: Annotated[Optional[str], Option("--mode", help="Mode for the resumed stage.")] = None,
           choice: Annotated[Optional[str], Option("--choice", help="Answer to the boundary's pending decision.")] = None,
           session: Session = None, store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
           as_role: RoleOpt = None, expect: ExpectOpt = None) -> None:
    """Resume from a reset boundary (consumes it, once).

    A boundary with a pending decision needs --choice; resuming on a draft whose passport is STALE
    or UNVERIFIED warns. The resume entry names the boundary it consumes, the branch chosen, any
    --stage/--mode override and this session's marker.
    """
    done(document("resume", open_store(store), locals()).value, json)

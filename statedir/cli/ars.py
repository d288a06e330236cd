"""Adjudication activity (ARS): `bind` a source artifact, `seal` the run after its terminal state."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from statedir.cli.common import DEFAULT_ACTOR, ActorOpt, ExpectOpt, JsonOpt, RunArg, StoreOpt, document, open_store
from statedir.cli.registry import app
from statedir.cli.render import done
from statedir.commands.params import Argument, Option

FAMILIES = ("revision_author_adjudication, compliance_report, re_review_traceability, explicit_user_request "
            "or mandatory_checkpoint_response")


@app.command()
def bind(run_id: RunArg,
         family: Annotated[str, Argument(help=f"The source family: {FAMILIES}.", show_default=False)],
         artifact: Annotated[Optional[str], Option("--artifact", help="The artifact id (letters, digits, ._:-).")] = None,
         role: Annotated[Optional[str], Option("--role", help="The artifact's role in its family, e.g. author_adjudication_input.")] = None,
         group: Annotated[Optional[str], Option("--group", help="The group id, SOURCE-GROUP-<id>; a group's artifacts are bound one after another.")] = None,
         group_stage: Annotated[Optional[str], Option("--group-stage", help="revision_author_adjudication only: the review stage of the group (3 or 3p).")] = None,
         path: Annotated[Optional[str], Option("--path", help="The artifact's path relative to the artifact root (never a hash).")] = None,
         not_applicable: Annotated[bool, Option("--not-applicable", help="Mark the row not applicable (not_applicable_for_run).")] = False,
         unavailable: Annotated[Optional[str], Option("--unavailable", help="Mark the row unavailable: source_not_provided, source_unreadable, source_invalid or capture_not_supported.")] = None,
         store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
         expect: ExpectOpt = None) -> None:
    """Best-effort: bind an artifact to the run's adjudication-activity row of FAMILY (or mark the row)."""
    done(document("bind", open_store(store), locals()).value, json)


@app.command()
def seal(run_id: RunArg,
         artifact_root: Annotated[Path, Option("--artifact-root", help="The directory the bound relative paths are read under.")],
         bindings: Annotated[Optional[str], Option("--bindings", help="Five pending rows (YAML or JSON) to seal instead of the run's own.")] = None,
         store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
         expect: ExpectOpt = None) -> None:
    """After the terminal state: hash every bound artifact and write adjudication_activity_sources."""
    done(document("seal", open_store(store), locals()).value, json)

"""The integrity gates' user answers: `resolve`, the FAIL-loop resolution after the retry cap."""
from __future__ import annotations

from typing import Annotated, Optional

from statedir.cli import completion
from statedir.cli.common import DEFAULT_ACTOR, ActorOpt, ExpectOpt, JsonOpt, RunArg, StoreOpt, open_store
from statedir.cli.registry import app
from statedir.cli.render import done
from statedir.commands.params import Argument, Option


@app.command()
def resolve(run_id: RunArg,
            stage: Annotated[str, Argument(help="The integrity stage whose FAIL rounds are used up (academic-pipeline: 2.5, 4.5).",
                                           autocompletion=completion.stage_ids)],
            decision: Annotated[str, Argument(help="The user's decision, one the template lists (academic-pipeline: handle_manually, remove_unverifiable: one more check; continue_unverified: the stage completes, partially unverified).")],
            reason: Annotated[Optional[str], Option("--reason", help="Why; the override ladder of the run and stage decides whether it is needed (academic-pipeline: the 1st may omit it, the 2nd needs one, the 3rd and later at least 100 characters).")] = None,
            store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
            expect: ExpectOpt = None) -> None:
    """Record the user's FAIL-loop resolution after an integrity stage's retry cap.

    The user's answer (--actor user at a terminal, or relayed by the orchestrator), recorded as the
    user's either way. Its entry in the integrity history carries the decision, the reason and the
    last check's open issues (unresolved_items), which stay visible on the stage, the draft's
    passport, the dashboard and `show --format ars`. Refused before the cap is reached.
    """
    done(open_store(store).resolve(run_id, stage, decision, reason=reason, actor=actor, expect=expect), json)

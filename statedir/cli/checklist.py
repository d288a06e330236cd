"""The failure-mode checklist of the integrity gates: `checklist` (the integrity agent's outcomes
for every mode at once) and `acknowledge` (the user's answer to a blocking mode)."""
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
def checklist(run_id: RunArg,
              stage: Annotated[str, Argument(help="An integrity stage carrying the checklist.", autocompletion=completion.stage_ids)],
              item: Annotated[list[str], Option("--item", help="MODE=OUTCOME for every mode (1-7; CLEAR, SUSPECTED, INSUFFICIENT_EVIDENCE).")],
              evidence: Annotated[Optional[list[str]], Option("--evidence", help="MODE=TEXT.")] = None,
              store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
              expect: ExpectOpt = None) -> None:
    """Record an integrity stage's failure-mode checklist, every mode at once.

    Actor integrity_verification. Prints whether it blocks and on which modes: any SUSPECTED mode
    blocks, and INSUFFICIENT_EVIDENCE blocks for the modes the template names (academic-pipeline:
    1, 3, 5, 6; for 2, 4, 7 it warns). A blocked stage cannot complete until the user answers each
    blocking mode (statedir acknowledge); nothing else lifts the block.
    """
    done(document("checklist", open_store(store), locals()).value, json)


@app.command()
def acknowledge(run_id: RunArg,
                stage: Annotated[str, Argument(help="The blocked integrity stage.", autocompletion=completion.stage_ids)],
                mode: Annotated[str, Argument(help="The blocking mode's id.")],
                answer: Annotated[str, Argument(help="confirm (back to stage 2), override (with --reason) or revise (until a new checklist).")],
                reason: Annotated[Optional[str], Option("--reason", help="Why (an override needs one, as long as the override ladder asks).")] = None,
                store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR, as_role: RoleOpt = None,
                expect: ExpectOpt = None) -> None:
    """Record the user's answer to a blocking failure mode.

    The user's answer (--actor user at a terminal, or relayed by the orchestrator), recorded as the
    user's either way. Acknowledging a mode that does not block is refused. (Accepting a verify
    finding is `statedir verify --acknowledge SHA`.)
    """
    done(document("acknowledge", open_store(store), locals()).value, json)

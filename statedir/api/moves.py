"""The legal moves from a run's state: `next`'s, and a refused transition's (its `moves`, from the
state it was refused at). statedir.engine.next_moves finds them by asking every action's rules, which
an accepted transition does without: the transaction leaves them to this layer."""
from __future__ import annotations

from typing import Any

from statedir.engine import next_moves
from statedir.engine.run_reading import read_log
from statedir.engine.template import Template
from statedir.engine.transition_data import RunData
from statedir.errors import StatedirError
from statedir.store.store import Store


def legal_moves(store: Store, t: Template, run: RunData, now: str) -> dict[str, Any]:
    """`statedir next`: the moves the rules accept from the run's state, and what blocks the
    rest (statedir.engine.next_moves); the reset-boundary log is read for `resume`."""
    if run.boundary_log is None:
        run.boundary_log = read_log(store, run.run_id, "reset_boundary")
    return next_moves.moves(t, run, now)


def name_in(store: Store, refusal: StatedirError) -> None:
    """A refused transition's details name the moves from the state it was refused at (unless
    they name moves of their own), before the run's id where the transaction added it."""
    at = refusal._refused_at
    if at is None or "moves" in refusal.details:
        return
    moves = legal_moves(store, at.template, at.run, at.now)["moves"]
    if at.named_run and "run_id" in refusal.details:
        run_id = refusal.details.pop("run_id")
        refusal.details["moves"] = moves
        refusal.details["run_id"] = run_id
    else:
        refusal.details["moves"] = moves

"""The plain data a transition is decided on (a run, a request), the change a yes decision describes
and the draft a decision edits into it; with the guards every decision shares (permission, liveness)."""
# Lazy imports: copy, for a copy of a value that is not plain data: a transition loads no copy
#   (tests/test_architecture.py).
from __future__ import annotations

from typing import Any

from statedir.engine import wording
from statedir.engine.template import USER, Template
from statedir.errors import IllegalTransition, PermissionDenied, RunTerminal


class _Record:
    """Equal to a record of its class with equal fields, and shown with them, as a dataclass is
    (written by hand: dataclasses imports inspect, which a CLI transition should not pay for)."""

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


class RunData(_Record):
    """One run as plain data: state.yaml, its stages, and the passports of current versions."""

    def __init__(self, run_id: str, state: dict[str, Any], stages: dict[str, dict[str, Any]],
                 passports: dict[str, dict[str, Any]] | None = None,
                 boundary_log: list[dict[str, Any]] | None = None) -> None:
        self.run_id = run_id
        self.state = state
        self.stages = stages
        self.passports = {} if passports is None else passports
        self.boundary_log = boundary_log  # the reset_boundary log, read where a rule needs it


class Request(_Record):
    def __init__(self, action: str, actor: str, args: dict[str, Any] | None = None, reason: str | None = None,
                 request_id: str | None = None, who: dict[str, str] | None = None) -> None:
        self.action = action
        self.actor = actor  # the role the transition is made in (Statedir-Actor)
        self.args = {} if args is None else args
        self.reason = reason
        self.request_id = request_id  # the transition's own identity (statedir.request_ids)
        # who else it names (statedir.gitops.identity.TRAILERS): person, answered_by, channel, via
        self.who = {} if who is None else who


class Change(_Record):
    """What a transition writes: whole files by kind, log entries to append, and its result."""

    def __init__(self, summary: str, state: dict[str, Any] | None = None,
                 stages: dict[str, dict[str, Any]] | None = None, passports: dict[str, dict[str, Any]] | None = None,
                 logs: list[tuple[str, dict[str, Any]]] | None = None, result: dict[str, Any] | None = None,
                 noop: bool = False) -> None:
        self.summary = summary
        self.state = state
        self.stages = {} if stages is None else stages
        self.passports = {} if passports is None else passports
        self.logs = [] if logs is None else logs
        self.result = {} if result is None else result
        self.noop = noop  # the request is already true: nothing to write, no commit; summary says why


def plain_copy(value: Any) -> Any:
    """A deep copy of plain data (mappings, lists, scalars), several times faster than
    copy.deepcopy, which a decision pays on every request (and `statedir next` on hundreds)."""
    if type(value) is dict:
        return {k: v if type(v) in _SCALARS else plain_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [v if type(v) in _SCALARS else plain_copy(v) for v in value]
    if type(value) in _SCALARS:
        return value
    import copy  # what is not plain data: rare

    return copy.deepcopy(value)


_SCALARS = frozenset({str, int, float, bool, type(None)})


class RunDraft:
    """Copies of a run's records that a decision edits, then turns into a Change."""

    def __init__(self, run: RunData) -> None:
        self.run = run
        self._state: dict[str, Any] | None = None  # copied when first read: many a decision refuses first
        self.stages: dict[str, dict[str, Any]] = {}
        self.passports: dict[str, dict[str, Any]] = {}
        self.logs: list[tuple[str, dict[str, Any]]] = []

    @property
    def state(self) -> dict[str, Any]:
        """The copy of the run's state.yaml the decision edits."""
        if self._state is None:
            self._state = plain_copy(self.run.state)
        return self._state

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        self._state = value

    def stage(self, stage_id: str) -> dict[str, Any]:
        if stage_id not in self.stages:
            self.stages[stage_id] = plain_copy(self.run.stages[stage_id])
        return self.stages[stage_id]

    def view(self, stage_id: str) -> dict[str, Any]:
        return self.stages.get(stage_id) or self.run.stages[stage_id]

    def all_stages(self) -> dict[str, dict[str, Any]]:
        return {**self.run.stages, **self.stages}

    def log(self, name: str, entry: dict[str, Any]) -> None:
        self.logs.append((name, entry))

    def change(self, summary: str, now: str, **result: Any) -> Change:
        state = None
        if self._state is not None and self._state != self.run.state:
            self.state["updated_at"] = now
            state = self.state
        stages = {k: v for k, v in self.stages.items() if v != self.run.stages.get(k)}
        return Change(summary, state, stages, self.passports, self.logs, result)


def applied(run: RunData, change: Change) -> RunData:
    """The run as it is once `change` is written (its current passports only)."""
    state = change.state if change.state is not None else run.state
    everything = {**run.passports, **change.passports}
    passports = {label: everything[label] for label in state.get("current_version", {}).values()
                 if label in everything}
    return RunData(run.run_id, state, {**run.stages, **change.stages}, passports, run.boundary_log)


def require_permission(t: Template, actor: str, action: str, stage_id: str | None = None) -> None:
    if not t.may(actor, action, stage_id):
        allowed = t.roles_that_may(action, stage_id)
        doing = wording.doing(action)
        may = f"{wording.either(allowed)} may" if allowed else "no role of the template may"
        if actor not in t.roles and actor != USER and not (stage_id and t.owner(stage_id) == actor):
            message = f"{actor} is no role of template {t.name} nor a person the store lists; {may} {doing}"
        else:
            message = f"{actor} may not {doing}; {may}"
        raise PermissionDenied(message,
                               actor=actor, action=action, allowed=allowed)


def require_live(t: Template, state: dict[str, Any]) -> None:
    if state["pipeline_state"] in t.terminal_targets:
        raise RunTerminal(f"run {state['run_id']} is {state['pipeline_state']}; no further transitions",
                          pipeline_state=state["pipeline_state"])


# The actions whose rules take a stage only while it is at work (`at_work`): each calls active_current on it
# before it accepts anything, and refuses nothing before that with a need. By the argument naming the stage
# (None: the current stage). `statedir next` and the flow check leave out a request of one for a stage not
# at work: the rules would refuse it, needing nothing.
AT_WORK = {"output": "stage", "integrity": "stage", "revision": None, "contract": "stage", "resolve": "stage",
           "checklist": "stage", "acknowledge_mode": "stage", "compliance": "stage"}


def at_work(t: Template, run: RunData, stage_id: str | None) -> bool:
    """Whether `stage_id` is the current, active stage of a running pipeline (what active_current holds)."""
    state = run.state
    return (stage_id is not None and stage_id == state["current_stage"]
            and run.stages[stage_id]["status"] == t.status["active"] and state["pipeline_state"] == t.pipeline["running"])


def active_current(t: Template, run: RunData, stage_id: str, what: str) -> dict[str, Any]:
    """The record of `stage_id`, refusing `what` unless it is the current, active stage of a running pipeline."""
    record = run.stages[stage_id]
    if at_work(t, run, stage_id):
        return record
    if stage_id != run.state["current_stage"] or record["status"] != t.status["active"]:
        raise IllegalTransition(f"{what} needs stage {t.display(stage_id)} current and {t.status['active']} "
                                f"(it is {record['status']}; current stage {run.state['current_stage']})",
                                stage=stage_id)
    raise IllegalTransition(f"{what} needs the pipeline running (it is {run.state['pipeline_state']})")

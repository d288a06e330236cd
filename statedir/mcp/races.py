"""A user's answer that lost a race: while the user filled the form, the question was answered
from another client (or the run moved on). The refusal says so, by whom and with what, instead of
a bare HEAD_MOVED whose "retry" would meet `no checkpoint is open`; and that retry's refusal says
who answered the last checkpoint. Plain data over the run's log entries; no MCP SDK here."""
from __future__ import annotations

from typing import Any

from statedir.errors import HeadMoved, StatedirError

NO_CHECKPOINT = "no checkpoint is open"  # the start of the rules' refusal (engine/stage_graph.py)


def since(entries: list[dict[str, Any]], head: str | None) -> list[dict[str, Any]]:
    """The log entries (newest first) made after commit `head`."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        if head is not None and str(entry.get("commit", "")).startswith(head):
            return out
        out.append(entry)
    return out if head is None else []  # `head` not among them: too far back to tell


def _said(entry: dict[str, Any]) -> str:
    who = entry.get("by") or entry.get("actor")
    commit = str(entry.get("commit") or "")[:12]
    return f"{entry.get('summary')!s} (by {who}, commit {commit})"


def _what(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: entry.get(key) for key in ("commit", "action", "summary", "actor", "by", "time")}


ANSWERS = ("confirm", "resolve", "acknowledge")  # the actions that record a user's answer


def lost(exc: StatedirError, about: str, stage: str, run_id: str, entries: list[dict[str, Any]],
         still_open: bool | None, where: str) -> StatedirError:
    """The refusal for the user's answer to the `about` at `stage` of `run_id`, refused HEAD_MOVED
    (`exc`) after `entries` were made (newest first); `still_open`: whether the question stands (None:
    unless one of `entries` answered it); `where`: the run's state now."""
    if not entries:
        return exc
    answered = next((e for e in entries if e.get("action") in ANSWERS), None)
    if still_open is None:
        still_open = answered is None
    details = {**exc.details, "run_id": run_id, "stage": stage, "meanwhile": [_what(e) for e in entries[:5]]}
    if answered is not None and not still_open:
        return HeadMoved(f"the user's answer was not recorded: the {about} at stage {stage} was answered meanwhile, "
                         f"from another client: {_said(answered)}. The run is now {where}. Do not retry: tell the "
                         "user what was recorded, then read `next`", **details, answered=_what(answered))
    if still_open:
        return HeadMoved(f"the user's answer was not recorded: run {run_id} changed while they answered "
                         f"({_said(entries[0])}). The {about} is still open: ask the user again", **details)
    return HeadMoved(f"the user's answer was not recorded: run {run_id} moved on while they answered "
                     f"({_said(entries[0])}); it is now {where}. Read `next`", **details)


def last_answer(exc: StatedirError, entries: list[dict[str, Any]]) -> StatedirError:
    """`confirm`'s `no checkpoint is open`, with who answered the last one and how (`entries`: the
    run's `confirm` log entries, newest first)."""
    if not entries or not exc.message.startswith(NO_CHECKPOINT):
        return exc
    return type(exc)(f"{exc.message}; the last checkpoint was answered: {_said(entries[0])}", **exc.details,
                     answered=_what(entries[0]))


def told(sd: Any, exc: StatedirError, path: tuple[str, ...], answer: Any) -> StatedirError:
    """Refusal `exc` of a call to the command `path` carrying the user's `answer` (a
    checkpoint_question.Answer, or None) on the open store `sd`, said as a lost race where it is one."""
    if sd is None:
        return exc
    try:
        if answer is not None and exc.code == "HEAD_MOVED":
            asked = answer.question
            state = sd.load(asked.run_id)[1].state
            # a checkpoint's question stands while that checkpoint is open; another's until answered
            still = (state.get("checkpoint") or {}).get("stage") == asked.stage if asked.about == "checkpoint" \
                else None
            where = f"at stage {state.get('current_stage')}, {state.get('pipeline_state')}"
            return lost(exc, asked.about, asked.stage, asked.run_id, since(sd.log(asked.run_id, limit=20), asked.head),
                        still, where)
        run_id = exc.details.get("run_id")
        if path == ("confirm",) and exc.code == "ILLEGAL_TRANSITION" and isinstance(run_id, str):
            return last_answer(exc, sd.log(run_id, action="confirm", limit=1))
    except StatedirError:
        pass  # the run unreadable now: the refusal as it came
    return exc

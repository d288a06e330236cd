"""The decision dashboard a checkpoint records (`checkpoints.dashboard:` of the template): the
metrics the upstream academic pipeline lists and its quality check ("is this output at least as good as the last?"),
given with the answer (`confirm --metric KEY=VALUE`, `--quality Q`). A quality the template
holds on (`hold_on`, regressed) pauses the pipeline at the checkpoint until the user answers.
And the round-trip counter per checkpoint (`checkpoints.round_trips`). Pure, like rules.py: no
metric, quality or stage is named here."""
from __future__ import annotations

import re
from typing import Any

from statedir.engine.template import Template
from statedir.engine.transition_data import RunDraft
from statedir.errors import IllegalTransition, InvalidValue
from statedir.hints import opt

_RATIO = re.compile(r"^(\d{1,9})/(\d{1,9})$")


def spec(t: Template) -> dict[str, Any] | None:
    return t.checkpoints.get("dashboard")


def parse(t: Template, checkpoint: dict[str, Any], args: dict[str, Any]) -> dict[str, Any] | None:
    """The dashboard the answer gives (`{"metrics": {...}, "quality": Q}`), None where it gives
    none; INVALID_VALUE naming what is allowed for an unknown key, a bad value or quality, or a
    checkpoint of a type that records none."""
    metrics, quality = args.get("metrics") or [], args.get("quality")
    if not metrics and quality is None:
        return None
    dash = spec(t)
    if dash is None:
        raise InvalidValue(f"template {t.name} declares no decision dashboard: {opt('metric')} and {opt('quality')} are not taken")
    if checkpoint["type"] not in dash["types"]:
        raise InvalidValue(f"{opt('metric')} and {opt('quality')} are recorded at a {' or '.join(dash['types'])} checkpoint; "
                           f"the open one (after stage {t.display(checkpoint['stage'])}) is {checkpoint['type']}",
                           checkpoint=checkpoint["type"], allowed=list(dash["types"]))
    if checkpoint.get("held"):
        raise IllegalTransition(f"the dashboard of stage {t.display(checkpoint['stage'])}'s checkpoint is recorded "
                                f"(quality {checkpoint['held']}): the user answers it with {opt('response')}")
    known = dict(dash["metrics"])
    out: dict[str, Any] = {}
    for raw in metrics:
        key, sep, value = str(raw).partition("=")
        if not sep or key not in known:
            raise InvalidValue(f"{opt('metric')} {raw!r}: use KEY=VALUE with KEY one of {', '.join(known)}",
                               metric=raw, allowed=list(known))
        if key in out:
            raise InvalidValue(f"{opt('metric')} {key} is given twice", metric=key)
        out[key] = _value(key, known[key], value)
    if quality is not None and quality not in dash["quality"]:
        raise InvalidValue(f"unknown {opt('quality')} {quality!r}; use one of {', '.join(dash['quality'])}",
                           quality=quality, allowed=list(dash["quality"]))
    return {"metrics": out, "quality": quality}


def _value(key: str, kind: str, value: str) -> int | str:
    if kind == "count":
        if not value.isdigit() or len(value) > 12:
            raise InvalidValue(f"{opt('metric')} {key}={value!r}: a whole number (0 or more)", metric=key)
        return int(value)
    match = _RATIO.match(value)
    if not match or int(match[1]) > int(match[2]) or int(match[2]) == 0:
        raise InvalidValue(f"{opt('metric')} {key}={value!r}: N/T, N of T (T at least 1, N at most T)", metric=key)
    return f"{int(match[1])}/{int(match[2])}"


def record(draft: RunDraft, stage_id: str, dash: dict[str, Any], now: str) -> None:
    draft.stage(stage_id)["dashboard"] = {"metrics": dash["metrics"], "quality": dash["quality"], "at": now}


def holds(t: Template, dash: dict[str, Any] | None) -> bool:
    """Whether this dashboard's quality pauses the pipeline until the user answers."""
    return bool(dash) and dash["quality"] in ((spec(t) or {}).get("hold_on") or [])


def hold(t: Template, draft: RunDraft, checkpoint: dict[str, Any], dash: dict[str, Any], now: str) -> str:
    """Pause the pipeline at the open checkpoint; the summary of the change."""
    state = draft.state
    state.update(pipeline_state=t.pipeline["paused"], paused_from=state["pipeline_state"],
                 checkpoint={**checkpoint, "held": dash["quality"]})
    draft.log("checkpoints", {"at": now, "event": "held", "stage": checkpoint["stage"], "type": checkpoint["type"],
                              "response": None, "next": None, "dashboard": dash,
                              **({"round_trip": checkpoint["round_trip"]} if checkpoint.get("round_trip") else {})})
    responses = " or ".join(t.checkpoints.get("mandatory_responses", []))
    return (f"checkpoint of stage {t.display(checkpoint['stage'])} held: quality {dash['quality']}; "
            f"the pipeline is paused until the user answers (--response {responses})")


def count_round_trip(t: Template, state: dict[str, Any], stage_id: str) -> int | None:
    """One more opening of `stage_id`'s checkpoint, where the template keeps the counter."""
    if not t.checkpoints.get("round_trips"):
        return None
    counts = state.setdefault("checkpoint_round_trips", {})
    counts[stage_id] = counts.get(stage_id, 0) + 1
    return int(counts[stage_id])

"""A decision a checkpoint takes as its answer (`checkpoint_decisions:` of the template): the
Stage 5 entry's finalization format (`confirm --format STYLE`, recorded on the stage the answer
starts as `citation_style`; with `required`, an answer starting a stage must give it); and
(`decides`) the user's pick where the checkpoint's stage left the decision to them (`when`: after
a failed re-review check, `confirm --decision accept|...`), recorded on that stage itself, the next
stage following from it by the graph. Pure, like rules.py: no option, field or stage is named here."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.transition_data import RunDraft
from statedir.errors import InvalidValue
from statedir.hints import opt

PICK = "decision"  # confirm's argument for a pick, refused where no checkpoint takes one


def declared(t: Template) -> dict[str, dict[str, Any]]:
    return t.doc.get("checkpoint_decisions") or {}


def applying(t: Template, stage_id: str, stages: dict[str, dict[str, Any]],
             state: dict[str, Any]) -> dict[str, Any] | None:
    """The decision the checkpoint after `stage_id` takes, where its `when` holds on that stage."""
    spec = declared(t).get(stage_id)
    if spec is None or not template_conditions.all_hold(spec.get("when", []), stages.get(stage_id, {}), state):
        return None
    return spec


def _allowed(here: dict[str, Any]) -> str:
    return f"{opt(here['option'])} " + "|".join(str(o) for o in here["options"])


def parse(t: Template, checkpoint: dict[str, Any], args: dict[str, Any], stages: dict[str, dict[str, Any]],
          state: dict[str, Any]) -> tuple[str, str] | None:
    """(field, value) the answer records, None where it gives none; INVALID_VALUE for an option
    given at a checkpoint that does not take it, or a value not among its options; and where the
    decision `decides`, for an answer without it, or one naming the next stage instead."""
    decisions = declared(t)
    here = applying(t, checkpoint["stage"], stages, state)
    given = {spec["option"] for spec in decisions.values() if args.get(spec["option"]) is not None}
    if args.get(PICK) is not None and PICK not in {spec["option"] for spec in decisions.values()}:
        raise InvalidValue(f"{opt(PICK)}: no checkpoint of template {t.name} {t.doc.get('version')} takes the user's "
                           "pick of a decision", option=PICK)
    if here is not None and here.get("decides") and (here["option"] not in given or args.get("next") is not None):
        what = f"{{opt:next}} {args['next']} names a stage, not a decision; " if args.get("next") is not None else ""
        raise InvalidValue(f"the user's answer after stage {t.display(checkpoint['stage'])} picks its decision "
                           f"({here['question']}): {what}answer with {_allowed(here)}",
                           option=here["option"], allowed=[str(o) for o in here["options"]])
    if not given:
        return None
    for option in sorted(given):
        if here is None or here["option"] != option:
            where = [f"after stage {t.display(sid)}" + (" where its decision is the user's" if spec.get("when") else "")
                     for sid, spec in decisions.items() if spec["option"] == option]
            raise InvalidValue(f"--{option} answers the checkpoint {' or '.join(where)}; the open one is after "
                               f"stage {t.display(checkpoint['stage'])}", option=option)
    assert here is not None
    value = args[here["option"]]
    options = [str(o) for o in here["options"]]
    if value not in options:
        raise InvalidValue(f"--{here['option']} {value!r}: {here['question']} one of {', '.join(options)}",
                           option=here["option"], allowed=options)
    return str(here["records"]), str(value)


def check_given(t: Template, checkpoint: dict[str, Any], answer: tuple[str, str] | None, target: str,
                stages: dict[str, dict[str, Any]], state: dict[str, Any]) -> None:
    """INVALID_VALUE for an answer starting stage `target` without the decision the checkpoint
    requires (`required`: the Stage 5 entry's citation style); an answer ending the run needs none."""
    here = applying(t, checkpoint["stage"], stages, state)
    if answer is None and here is not None and here.get("required") and target not in t.terminal_targets:
        raise InvalidValue(f"the answer after stage {t.display(checkpoint['stage'])} starting stage "
                           f"{t.display(target)} takes the user's decision ({here['question']}): give it with "
                           f"{_allowed(here)}", option=here["option"], allowed=[str(o) for o in here["options"]])


def decides(t: Template, checkpoint: dict[str, Any], stages: dict[str, dict[str, Any]],
            state: dict[str, Any]) -> bool:
    """Whether the open checkpoint's answer picks its stage's decision (and so the next stage)."""
    here = applying(t, checkpoint["stage"], stages, state)
    return bool(here and here.get("decides"))


def route(t: Template, draft: RunDraft, checkpoint: dict[str, Any], answer: tuple[str, str]) -> str:
    """The user's pick recorded on the checkpoint's stage, and the one next stage the graph leads to from it."""
    source = checkpoint["stage"]
    record = draft.stage(source)
    record[answer[0]] = answer[1]
    leads = [e["to"] for e in t.edges_from(source) if e["to"] in checkpoint["choices"]
             and template_conditions.all_hold(e.get("when", []), record, draft.state)]
    if len(set(leads)) != 1:  # the template's graph, not the answer: checked when it is validated
        raise InvalidValue(f"the decision {answer[1]} leads to {', '.join(leads) or 'no stage'} from stage "
                           f"{t.display(source)}; the graph must lead to one", decision=answer[1])
    return str(leads[0])


def record(t: Template, draft: RunDraft, target: str, answer: tuple[str, str]) -> None:
    """The decision on the stage the answer starts."""
    if target in t.terminal_targets:
        raise InvalidValue(f"{answer[0]} is recorded on the stage the answer starts; {opt('next')} {target} starts none")
    draft.stage(target).setdefault("answers", {})[answer[0]] = answer[1]

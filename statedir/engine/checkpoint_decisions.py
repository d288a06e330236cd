"""A decision a checkpoint takes as its answer (`checkpoint_decisions:` of the template): the
Stage 5 entry's finalization format (`confirm --format STYLE`, recorded on the stage the answer
starts as `citation_style`). Pure, like rules.py: no option, field or stage is named here."""
from __future__ import annotations

from typing import Any

from statedir.engine.template import Template
from statedir.engine.transition_data import Draft
from statedir.errors import InvalidValue


def declared(t: Template) -> dict[str, dict[str, Any]]:
    return t.doc.get("checkpoint_decisions") or {}


def parse(t: Template, checkpoint: dict[str, Any], args: dict[str, Any]) -> tuple[str, str] | None:
    """(field, value) the answer records, None where it gives none; INVALID_VALUE for an option
    given at a checkpoint that does not take it, or a value not among its options."""
    decisions = declared(t)
    given = {spec["option"] for spec in decisions.values() if args.get(spec["option"]) is not None}
    if not given:
        return None
    here = decisions.get(checkpoint["stage"])
    for option in sorted(given):
        if here is None or here["option"] != option:
            where = [f"after stage {t.display(sid)}" for sid, spec in decisions.items() if spec["option"] == option]
            raise InvalidValue(f"--{option} answers the checkpoint {' or '.join(where)}; the open one is after "
                               f"stage {t.display(checkpoint['stage'])}", option=option)
    assert here is not None
    value = args[here["option"]]
    options = [str(o) for o in here["options"]]
    if value not in options:
        raise InvalidValue(f"--{here['option']} {value!r}: {here['question']} one of {', '.join(options)}",
                           option=here["option"], allowed=options)
    return str(here["records"]), str(value)


def record(t: Template, draft: Draft, target: str, answer: tuple[str, str]) -> None:
    """The decision on the stage the answer starts."""
    if target in t.terminal_targets:
        raise InvalidValue(f"{answer[0]} is recorded on the stage the answer starts; --next {target} starts none")
    draft.stage(target).setdefault("answers", {})[answer[0]] = answer[1]

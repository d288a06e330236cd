"""What a stage may record as its outputs: the names its template declares for it (the stage's
`produces`, the template's materials and version series, and a version label of one, such as
`research_v1`), each as written or in words with a note (`RQ Brief`, `Bibliography (22 sources)`,
`Editorial Decision: Major Revision`, `final_paper.pdf`: the head before ` (`, `:` or a file's
suffix, case and blanks aside). An output the template does not know is refused with the names it expects, so
an agent cannot complete a stage with outputs nobody declared; a template declaring `free_outputs: true`
records it with a warning naming the declared ones instead. Called from `rules.decision.decide` for
every request that records outputs (`stage ... output`, `output`). A template declaring
`outputs_once: true` holds each output once per stage (`new`): a name already recorded is not
recorded again, so repeated calls cannot grow a stage's file without bound."""
from __future__ import annotations

import re
from typing import Any

from statedir.engine.template import Template
from statedir.errors import InvalidValue

_LABEL = re.compile(r"^(?P<series>.+)_v[1-9][0-9]*$")  # a version label: research_v1
_NOTE = re.compile(r" \(|:|\.(?=[A-Za-z0-9]{1,5}$)")  # where a name's note or file suffix starts
_BLANKS = re.compile(r"[\s-]+")


def _name(text: str) -> str:
    """An output's name: its head (before a note or a file suffix), lower case, blanks as `_`."""
    return _BLANKS.sub("_", _NOTE.split(text, maxsplit=1)[0].strip().lower())


def _known(text: str, names: set[str]) -> bool:
    name = _name(text)
    label = _LABEL.match(name)
    return name in names or (label is not None and label["series"] in names)


def accepted(t: Template, stage_id: str) -> list[str]:
    """The outputs stage `stage_id` may record, its own declared ones first."""
    own = [str(name) for name in t.stage(stage_id).get("produces", [])]
    series = [str(s["name"]) for s in t.series]
    return list(dict.fromkeys([*own, *t.materials, *series]))


def check(t: Template, args: dict[str, Any], stage_id: str | None) -> str | None:
    """INVALID_VALUE naming the outputs the template does not know and those it expects; where
    the template declares `free_outputs: true`, the warning saying so instead (None: all known)."""
    outputs = args.get("outputs")
    if not outputs or stage_id is None:
        return None
    known = accepted(t, stage_id)
    names = {_name(name) for name in known}
    unknown = [text for text in outputs if not (isinstance(text, str) and _known(text, names))]
    if not unknown:
        return None
    said = f"{', '.join(map(repr, unknown[:5]))}{' (and more)' if len(unknown) > 5 else ''}"
    expected = (f"one of {', '.join(known)} (or a version label of one, such as {known[0]}_v1; a note may follow "
                "a name, in parentheses or after a colon)") if known else "none: its template declares no outputs"
    if t.doc.get("free_outputs") is True:
        return (f"stage {t.display(stage_id)} recorded {said}, which template {t.name} does not declare (it "
                f"takes free outputs); the declared ones: {', '.join(known) or 'none'}")
    raise InvalidValue(f"stage {t.display(stage_id)} has no output {said}; it records {expected}",
                       argument="output", unknown=unknown[:20], expected=known)


def new(t: Template, recorded: list[Any], outputs: list[Any]) -> list[Any]:
    """The outputs a request adds to a stage that records `recorded`: all of them, or, where the
    template declares `outputs_once: true`, each name not recorded yet, once (exact text)."""
    if t.doc.get("outputs_once") is not True:
        return list(outputs)
    return [name for name in dict.fromkeys(outputs) if name not in recorded]

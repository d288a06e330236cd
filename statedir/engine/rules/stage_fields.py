"""`set RUN stages.<stage>.<field> VALUE` for the stage fields the template lets `set` change
(`settable_stage_fields:`, the academic pipeline's assigned_to and team_notes)."""
from __future__ import annotations

from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunDraft, RunData
from statedir.errors import IllegalTransition, InvalidValue

MAX_TEXT = 4000  # a note, not a document: a longer one belongs in a file


def set_stage_field(t: Template, run: RunData, draft: RunDraft, field: str, value: str, now: str) -> Change:
    """One stage field set (an empty value clears it), its stage file the one file changed."""
    settable = list(t.doc.get("settable_stage_fields", []))
    raw_stage, _, name = field[len("stages."):].rpartition(".")  # a stage id may hold a dot: 2.5, 4.5
    if not settable:
        raise InvalidValue(f"template {t.name} lets `set` change no stage field", field=field)
    if name not in settable or not raw_stage:
        raise InvalidValue(f"{field!r} cannot be set; a stage's settable fields: "
                           + ", ".join(f"stages.STAGE.{n}" for n in settable), field=field, allowed=settable)
    stage_id = t.resolve_stage(raw_stage)  # an unknown stage: UNKNOWN_STAGE naming the stages
    if len(value) > MAX_TEXT:
        raise InvalidValue(f"{field} takes at most {MAX_TEXT} characters ({len(value)} given); "
                           "keep longer notes in a file (material {opt:files})", field=field)
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        raise InvalidValue(f"{field} holds a control character", field=field)
    record = draft.stage(stage_id)
    new = value.strip() or None
    if record.get(name) == new:
        raise IllegalTransition(f"stage {t.display(stage_id)}'s {name} already has that value", field=field)
    record[name] = new
    return draft.change(f"set stage {t.display(stage_id)} {name}" + (" (cleared)" if new is None else ""), now)

"""The `inquiry_ledger` run setting's branch ledger: `statedir inquiry RUN --branch NAME --note TEXT`
appends one entry to the run's append-only `inquiry_ledger` log and counts the branch in
`state.yaml` (`inquiry_branches`). The ledger is published (shown by `show`, the ARS export and
the dashboard) from its `publish_from`-th branch on, and summarized only on the checkpoints of the
stages the setting lists (`summary_at`); it never changes a verdict, a gate or a checkpoint's
requirement. Pure, like rules.py: no stage or branch is named here."""
from __future__ import annotations

import re
from typing import Any

from statedir.engine import run_settings
from statedir.engine.template import Template
from statedir.engine.transition_data import Change, RunDraft, Request, RunData
from statedir.errors import IllegalTransition, InvalidValue
from statedir.hints import HINT, Hint, Placeholder, opt

EFFECT = "inquiry_ledger"
BRANCH_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_NOTE = 2000


def spec_on(t: Template, state: dict[str, Any]) -> dict[str, Any] | None:
    name = run_settings.setting_for(t, EFFECT)
    return run_settings.declared(t)[name] if name and run_settings.on(t, state, name) else None


def record(t: Template, run: RunData, req: Request, now: str, _: str | None) -> Change:
    """One branch note appended (a new branch or another note on one)."""
    spec = spec_on(t, run.state)
    if spec is None:
        name = run_settings.setting_for(t, EFFECT) or EFFECT
        raise IllegalTransition(f"run {run.run_id} keeps no inquiry ledger: it was not made with the setting "
                                f"{name} (`{HINT}`; settings never change)", setting=name,
                                hint=Hint("new", {"run_id": Placeholder("RUN"), "setting": f"{name}=true"}))
    branch, note = req.args.get("branch"), req.args.get("note")
    if not isinstance(branch, str) or not BRANCH_RE.match(branch):
        raise InvalidValue(f"{opt('branch')} {branch!r}: a name of letters, digits and ._- (at most 64, starting with a "
                           "letter or digit)", argument="branch")
    if not isinstance(note, str) or not note.strip():
        raise InvalidValue("{opt:note} must not be empty", argument="note")
    if len(note) > MAX_NOTE or any(ord(c) < 32 and c not in "\n\t" for c in note):
        raise InvalidValue(f"{opt('note')} takes at most {MAX_NOTE} characters of text, no control characters",
                           argument="note")
    draft = RunDraft(run)
    branches = draft.state.setdefault("inquiry_branches", {})
    new_branch = branch not in branches
    branches[branch] = branches.get(branch, 0) + 1
    draft.log("inquiry_ledger", {"at": now, "branch": branch, "note": note.strip(),
                                 "stage": run.state.get("current_stage"), "seq": sum(branches.values())})
    published = published_from(spec, branches)
    summary = f"inquiry {'branch' if new_branch else 'note on'} {branch} ({len(branches)} branch" \
              f"{'es' if len(branches) != 1 else ''})" + ("; the ledger is published" if published else "")
    return draft.change(summary, now, branch=branch, branches=len(branches), published=published)


def published_from(spec: dict[str, Any], branches: dict[str, int]) -> bool:
    return len(branches) >= int(spec.get("publish_from", 2))


def published(t: Template, state: dict[str, Any]) -> dict[str, int] | None:
    """The branches and their note counts, where the ledger is published (None otherwise)."""
    spec = spec_on(t, state)
    branches = state.get("inquiry_branches") or {}
    return dict(branches) if spec is not None and published_from(spec, branches) else None


def checkpoint_summary(t: Template, state: dict[str, Any], stage_id: str) -> str | None:
    """The compact summary a checkpoint of `stage_id` carries: only at the stages the setting
    lists, only once published."""
    spec = spec_on(t, state)
    branches = published(t, state)
    if spec is None or branches is None or stage_id not in [str(s) for s in spec.get("summary_at", [])]:
        return None
    notes = sum(branches.values())
    return (f"{len(branches)} inquiry branches ({', '.join(branches)}), {notes} notes; advisory: "
            "never changes a verdict")

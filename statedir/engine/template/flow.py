"""A template's flow explored: every state a run of it can reach through the pipeline's own
moves, and whether each can still end, `completed` or `aborted`. A reachable state from which
no sequence of moves ends the run is a dead end, and the template is refused.

The moves are asked of the rules themselves (`rules.decision.decide` on a run's data, through the
candidates of `statedir next`), so the check follows the rules as they are. What is explored:
the current stage's status moves, the submissions conditions read (integrity verdicts with
and without open issues, revision rounds, the loop counter where a condition reads it),
answering a checkpoint with every response and every `--next`; a material a stage needs is
registered when entering the stage asks for it. Not explored: `pipeline aborted` and `redo`
(exits from anywhere, which would make every state look safe), pausing, and what changes no
condition's input (outputs, observer reports, run fields, skipping or blocking other stages).
States are told apart as statedir.engine.flow_state says."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
from collections import deque
from pathlib import Path
from typing import Any

from statedir.engine import flow_state, mid_entry, next_moves, runs, template
from statedir.engine.next_moves import Candidate
from statedir.engine.template import Template
from statedir.engine.template import conditions as template_conditions
from statedir.engine.template.meaning import json_path
from statedir.engine.transition_data import RunData, applied
from statedir.errors import BadFile, StatedirError
from statedir.files import rules_identity, schema, yaml
from statedir.files.parse_cache import digest

NOW = "2000-01-01T00:00:00Z"  # the explored runs' clock: any fixed time
LIMIT = 50_000  # states; a flow larger than this is reported unexplored, never refused
# The (issues_found, issues_fixed) an explored integrity check records: none, or one open; and
# where a condition reads the counts themselves, one found and fixed.
ISSUE_SAMPLES: list[tuple[int | None, int | None]] = [(0, 0), (1, 0)]
FIXED_SAMPLE = (1, 1)


@dataclasses.dataclass
class Flow:
    """The outcome: states explored, the dead ends found (each a description and its stage),
    and whether the whole flow fit in the limit."""

    states: int
    dead_ends: list[dict[str, Any]]
    complete: bool = True


def _entry(t: Template, entry: str) -> RunData | None:
    """A new run at `entry`; past a never-skipped stage, on a fresh VERIFIED passport (None
    where the template lets no run enter there)."""
    try:
        run, change = runs.new_run(t, "flow-check", "flow check", "en", entry, NOW)
    except StatedirError:
        brings = mid_entry.sample(t, entry, NOW)
        if not brings:
            return None
        try:
            run, change = runs.new_run(t, "flow-check", "flow check", "en", entry, NOW, **brings)
        except StatedirError:
            return None
    run.passports = dict(change.passports)
    return run


def _with_materials(t: Template, run: RunData, wanted: list[list[str]]) -> RunData | None:
    """The run with one material of each unmet requirement registered, as a caller would."""
    for names in wanted:
        if not names:
            return None
        args = {"names": [names[0]], "files": [], "origin_skill": None, "origin_mode": None, "upstream": []}
        actor = next_moves.actor_for(t, "material")
        if actor is None:
            return None
        change, refusal = next_moves.trial(t, run, Candidate("material", actor, args, {}), NOW)
        if change is None:
            return None
        run = applied(run, change)
    return run


def _step(t: Template, run: RunData, candidate: Candidate) -> RunData | None:
    """The run after `candidate`, where the rules accept it (registering the materials entering
    a stage asks for first); None where they refuse it or it changes nothing."""
    _, change, refusal = next_moves.decided(t, run, candidate, NOW)
    if refusal is not None and refusal.code == "PREREQUISITES_MISSING" and refusal.details.get("materials"):
        stocked = _with_materials(t, run, refusal.details["materials"])
        if stocked is None:
            return None
        _, change, refusal = next_moves.decided(t, stocked, candidate, NOW)
        run = stocked
    if change is None or change.noop:
        return None
    return applied(run, change)


def explore(t: Template, limit: int = LIMIT, *, pruned: bool = True) -> Flow:
    """Every state reachable from the template's entry points, and the dead ends among them
    (`pruned`: the moves the rules' data refuse without a need left untried, as `statedir next`
    leaves them; False tries each, for the tests to compare)."""
    reads = flow_state.reads(t)
    seen: dict[tuple[Any, ...], RunData] = {}
    edges: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {}
    queue: deque[tuple[Any, ...]] = deque()
    for entry in t.entry_points():
        run = _entry(t, entry)
        if run is not None and (key := flow_state.key(t, run, reads)) not in seen:
            seen[key] = run
            queue.append(key)
    complete = True
    counters = "loop_count" in reads.counters
    counts_read = {"issues_found", "issues_fixed"} & set(reads.fields)
    samples = ISSUE_SAMPLES + ([FIXED_SAMPLE] if counts_read else [])
    while queue:
        key = queue.popleft()
        run = seen[key]
        edges[key] = set()
        if run.state["pipeline_state"] in t.terminal_targets:
            continue
        for candidate in next_moves.flow_candidates(t, run, samples, counters, pruned=pruned):
            after = _step(t, run, candidate)
            if after is None:
                continue
            found = flow_state.key(t, after, reads)
            edges[key].add(found)
            if found not in seen:
                if len(seen) >= limit:
                    complete = False
                    continue
                seen[found] = after
                queue.append(found)
    return Flow(len(seen), _dead_ends(t, seen, edges) if complete else [], complete)


def _dead_ends(t: Template, seen: dict[tuple[Any, ...], RunData],
               edges: dict[tuple[Any, ...], set[tuple[Any, ...]]]) -> list[dict[str, Any]]:
    back: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {key: set() for key in seen}
    for source, targets in edges.items():
        for target in targets:
            back[target].add(source)
    ending = [key for key, run in seen.items() if run.state["pipeline_state"] in t.terminal_targets]
    can_end, todo = set(ending), list(ending)
    while todo:
        for source in back[todo.pop()]:
            if source not in can_end:
                can_end.add(source)
                todo.append(source)
    stuck = [key for key in seen if key not in can_end]
    # Report the states nothing at all leads on from first: they are the cause of the others.
    order = {key: i for i, key in enumerate(seen)}
    stuck.sort(key=lambda key: (bool(edges.get(key, set()) - {key}), order[key]))
    return [_described(t, seen[key], not (edges.get(key, set()) - {key})) for key in stuck]


def _described(t: Template, run: RunData, no_move: bool) -> dict[str, Any]:
    state = run.state
    stage_id = state.get("current_stage")
    record = template_conditions.facts(run.stages[stage_id]) if stage_id else {}
    shown = {k: record.get(k) for k in ("verdict", "issues_open", "decision", "fail_loop_decision")
             if record.get(k) not in (None, False)}
    where = (f"stage {t.display(stage_id)} {record.get('status')}" if stage_id else "the start") + (
        f" ({', '.join(f'{k} {v}' for k, v in shown.items())})" if shown else "")
    return {"stage": stage_id, "pipeline_state": state["pipeline_state"], "where": where,
            "no_move": no_move}


@functools.lru_cache(maxsize=32)
def _explored(doc_json: str) -> Flow:
    return explore(Template(json.loads(doc_json), "flow check"))


def _kept(path: Path) -> Flow | None:
    """A remembered flow, where its file holds one."""
    try:
        data = json.loads(path.read_bytes())
        flow = Flow(int(data["states"]), list(data["dead_ends"]), bool(data["complete"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return flow if all(isinstance(d, dict) for d in flow.dead_ends) else None


def checked(t: Template, cache: Path | None = None) -> Flow:
    """`explore`, remembered per template content in this process and, with `cache` (a store's
    disposable cache folder, under .git/statedir/), on disk: `flows/<digest>.json`, addressed
    by the template's content and the statedir at hand (statedir.files.rules_identity: its code,
    schemas and shipped templates), so a template brought by `new --template` is explored on
    its first use only. A missing or unreadable file is explored again and written anew."""
    doc_json = json.dumps(t.doc, sort_keys=True, default=str)
    if cache is None:
        return _explored(doc_json)
    key = digest(f"{rules_identity.key('flow 1')}\n{doc_json}".encode())
    path = cache / "flows" / f"{key}.json"
    flow = _kept(path)
    if flow is not None:
        return flow
    flow = _explored(doc_json)
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(dataclasses.asdict(flow), sort_keys=True))
        os.replace(tmp, path)
    return flow


def problems(t: Template, cache: Path | None = None) -> list[tuple[list[Any], str]]:
    """The dead ends as meaning problems, each at its stage's id (JSON path and message)."""
    flow = checked(t, cache)
    out: list[tuple[list[Any], str]] = []
    ends = f"{t.pipeline['completed']} or {t.pipeline['aborted']}"
    reported: set[str | None] = set()
    for dead in flow.dead_ends:
        if dead["stage"] in reported:
            continue
        reported.add(dead["stage"])
        how = "no move leads on from there" if dead["no_move"] else "every move from there leads to another dead end"
        path: list[Any] = ["stages", t.index(dead["stage"]), "id"] if dead["stage"] else ["entry_points"]
        out.append((path, f"dead end: a run can reach {dead['where']} with the pipeline {dead['pipeline_state']}, "
                          f"and then never {ends}: {how} ({flow.states} states explored)"))
    return out


def found(t: Template, raw: bytes | None = None, cache: Path | None = None) -> list[schema.Problem]:
    """The dead ends as validation problems naming their lines (read from `raw`, the
    template's bytes, or its source file)."""
    listed = problems(t, cache)
    if not listed:
        return []
    doc = None
    try:
        if raw is None:
            with open(t.source, "rb") as file:
                raw = file.read()
        doc = yaml.load(raw, t.source)
    except (OSError, BadFile):
        pass
    return [schema.Problem(t.source, json_path(path), message,
                           schema._line_of(doc, path) if doc is not None else None)  # noqa: SLF001
            for path, message in listed]


def require_no_dead_end(t: Template, cache: Path | None = None) -> None:
    """Refuse (BAD_FILE, naming the line) a template a run could get stuck in (`cache`: checked())."""
    listed = found(t, cache=cache)
    if listed:
        first = listed[0]
        where = f"{t.source}:{first.line}" if first.line else t.source
        more = f" (and {len(listed) - 1} more)" if len(listed) > 1 else ""
        raise BadFile(f"{where}: invalid template: {first.message}{more}", file=t.source, line=first.line,
                      errors=[{**p.as_dict(), "line": p.line} for p in listed])


def notes(paths: list[tuple[Path, str]]) -> list[str]:
    """For each valid template among `paths` (path, name shown), how much of its flow the
    check explored: a line for people (`validate -v`)."""
    out = []
    for path, shown in paths:
        try:
            flow = checked(template.parse(path.read_bytes(), shown))
        except (OSError, StatedirError):
            continue
        if not flow.complete:
            out.append(f"{shown}: flow larger than {flow.states} states; not checked for dead ends")
        elif not flow.dead_ends:
            out.append(f"{shown}: flow explored, {flow.states} states, no dead end")
    return out

"""The dead-end check: every state a run of a template can reach, explored through the rules;
a template with a state from which no move ends the run is refused where templates are checked
(`validate`, `new --template`), and both shipped templates pass."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statedir import api
from statedir.engine import next_moves, template
from statedir.engine.template import flow as template_flow
from tests.support.util import ROOT, cli, cli_json, snapshot

LINEAR = (ROOT / "templates" / "linear.yaml").read_text()
ACADEMIC = (ROOT / "templates" / "academic-pipeline.yaml").read_text()
OLD_ACADEMIC = (ROOT / "templates" / "academic-pipeline@3.21.yaml").read_text()  # before the integrity gates
# A check stage whose decision `fail` completes it, but only `pass` leads on: stuck at its checkpoint.
STUCK = [("name: linear", "name: stuck"),
         ("{id: check, name: CHECK,", "{id: check, decision: {values: [pass, fail]},\n"
                                      "     completion: [{field: decision, in: [pass, fail]}], name: CHECK,"),
         ("  - {from: check, to: deliver}\n",
          "  - {from: check, to: deliver, when: [{field: decision, in: [pass]}]}\n")]
# Before 3.22: stage 4.5 completed on PASS_WITH_NOTES, and the gate to 5 wanted a PASS with no issue open.
OLD_STUCK = [("    completion: [{field: verdict, in: [PASS]}, {field: issues_open, equals: 0}]\n",
              "    completion:\n      - any: [{field: verdict, in: [PASS, PASS_WITH_NOTES]}, {fail_loop_decision: true}]\n")]


def edited(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def test_a_template_with_a_dead_end_is_refused_where_templates_are_checked(sd: api.StateDir, repo: Path) -> None:
    path = repo / "stuck.yaml"
    path.write_text(edited(LINEAR, STUCK))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "{id: check," in text)
    code, out = cli_json("validate", "--schema", "template", str(path), cwd=repo)
    assert code == 1
    (error,) = out["errors"]  # type: ignore[index]
    assert error["path"] == "$.stages[2].id" and error["message"].startswith(f"line {line}: dead end: ")
    assert "stage check done (decision fail)" in error["message"] and "awaiting_confirmation" in error["message"]
    assert "never completed or aborted" in error["message"] and "states explored)" in error["message"]
    before = snapshot(repo)
    code, out = cli_json("new", "r1", "--template", str(path), cwd=repo)
    assert code == 2 and out["error"]["code"] == "BAD_FILE"  # type: ignore[index]
    assert f"stuck.yaml:{line}: invalid template: dead end" in out["error"]["message"]  # type: ignore[index]
    assert snapshot(repo) == before


@pytest.mark.slow  # every path through every shipped template
def test_the_shipped_templates_have_no_dead_end(repo: Path) -> None:
    for name in ("linear", "academic-pipeline"):
        flow = template_flow.checked(template.load(name))
        assert flow.complete and flow.dead_ends == [] and flow.states > 5, name
    proc = cli("validate", "-v", "--schema", "template", str(ROOT / "templates" / "linear.yaml"),
               str(ROOT / "templates" / "academic-pipeline.yaml"), cwd=repo,
               timeout=600)  # the whole flow explored again: about 30 s alone, minutes on a loaded machine
    assert proc.returncode == 0, proc.stdout + proc.stderr
    states = template_flow.checked(template.load("academic-pipeline")).states
    assert f"academic-pipeline.yaml: flow explored, {states} states, no dead end" in proc.stdout


def test_the_academic_template_as_it_was_is_refused_at_final_integrity() -> None:
    """Before: stage 4.5 completed on PASS_WITH_NOTES (or a PASS with issues open), and the gate
    to 5 wanted a PASS with zero open issues: the checkpoint offered nothing."""
    old = edited(OLD_ACADEMIC, OLD_STUCK)
    t = template.parse(old.encode(), "old.yaml")
    flow = template_flow.checked(t)
    assert flow.dead_ends and {d["stage"] for d in flow.dead_ends} == {"4.5"}
    assert all(d["pipeline_state"] == "awaiting_confirmation" and d["no_move"] for d in flow.dead_ends)
    assert {d["where"] for d in flow.dead_ends} >= {"stage 4.5 completed (verdict PASS, issues_open 1)",
                                                    "stage 4.5 completed (verdict PASS_WITH_NOTES)"}
    ((path, message),) = template_flow.problems(t)
    assert path == ["stages", t.index("4.5"), "id"] and "dead end" in message


def _trials(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each request put to the rules counted (the real rules answer it)."""
    asked: list[int] = []
    trial = next_moves.trial

    def counted(*args: Any) -> Any:
        asked.append(1)
        return trial(*args)
    monkeypatch.setattr(next_moves, "trial", counted)
    return asked


@pytest.mark.parametrize(("text", "times"), [
    (edited(LINEAR, STUCK), 1), (edited(OLD_ACADEMIC, OLD_STUCK), 2),
    pytest.param(ACADEMIC, 2, marks=pytest.mark.slow),  # its whole flow twice: about a minute alone
], ids=["stuck-linear", "old-academic-stuck", "academic"])
def test_leaving_out_what_the_rules_refuse_needing_nothing_explores_the_same_flow(
        text: str, times: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exploration asks the rules only what their data do not refuse without a need (as
    `next` does: a submission for a stage not at work, an answer with no checkpoint open): the
    same states, the same dead ends, from far fewer requests than trying every move."""
    t = template.parse(text.encode(), "flow.yaml")
    asked = _trials(monkeypatch)
    pruned = template_flow.explore(t)
    fewer = len(asked)
    every = template_flow.explore(t, pruned=False)
    assert pruned == every and pruned.complete
    assert times * fewer < len(asked) - fewer  # fewer requests (under half, of the academic flows)


def test_a_flow_larger_than_the_limit_is_reported_unexplored_not_refused() -> None:
    t = template.parse(edited(LINEAR, STUCK).encode(), "stuck.yaml")
    flow = template_flow.explore(t, limit=3)
    assert not flow.complete and flow.dead_ends == [] and flow.states == 3


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each exploration of a flow counted (the real one runs); the process's own memory of
    flows forgotten, as in a new command."""
    calls: list[int] = []
    explore = template_flow.explore

    def counted(t: template.Template, limit: int = template_flow.LIMIT) -> template_flow.Flow:
        calls.append(1)
        return explore(t, limit)
    monkeypatch.setattr(template_flow, "explore", counted)
    template_flow._explored.cache_clear()  # noqa: SLF001
    return calls


def _first_use_then_second(sd: api.StateDir, repo: Path, path: Path, monkeypatch: pytest.MonkeyPatch,
                           ) -> tuple[list[int], object, object]:
    """`new --template FILE` twice (two runs), each as a new process would: the count of
    explorations after each, and each outcome (the run's template, or the refusal's code and message)."""
    outcomes = []
    calls = _counting(monkeypatch)
    counts = []
    for run in ("r1", "r2"):
        template_flow._explored.cache_clear()  # noqa: SLF001
        try:
            sd.new(run, topic="t", template=str(path))
            outcomes.append(sd.show(run)["template"])
        except Exception as exc:  # noqa: BLE001 - the refusal is the outcome compared
            outcomes.append((type(exc).__name__, str(exc)))
        counts.append(len(calls))
    return counts, outcomes[0], outcomes[1]


def test_a_template_brought_by_new_is_explored_on_its_first_use_only(
        sd: api.StateDir, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = repo / "stuck.yaml"
    path.write_text(edited(LINEAR, STUCK))
    counts, first, second = _first_use_then_second(sd, repo, path, monkeypatch)
    assert counts == [1, 1] and first == second and "dead end" in str(first)  # the refusal remembered too
    (cached,) = (sd.store.cache_dir / "flows").iterdir()
    cached.unlink()  # disposable: explored again and written anew
    counts, _, again = _first_use_then_second(sd, repo, path, monkeypatch)
    assert counts == [1, 1] and again == first and [p.name for p in (sd.store.cache_dir / "flows").iterdir()] == [
        cached.name]
    path.write_text(edited(LINEAR, [("name: linear", "name: my-linear")]))  # other content: its own entry
    counts, made, made_again = _first_use_then_second(sd, repo, path, monkeypatch)
    assert counts == [1, 1] and made == made_again == "my-linear"
    assert len(list((sd.store.cache_dir / "flows").iterdir())) == 2


@pytest.mark.slow  # the academic template's whole flow, explored once (about 30 s alone)
def test_a_copy_of_the_academic_template_is_explored_once_and_answers_the_same(
        sd: api.StateDir, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = repo / "my-academic.yaml"  # a user's copy, its name and version changed (docs/templates.md)
    path.write_text(edited(ACADEMIC, [("\nname: academic-pipeline\n", "\nname: my-academic\n"),
                                      ("\nversion: ", "\nversion: '1' # was ")]))
    counts, first, second = _first_use_then_second(sd, repo, path, monkeypatch)
    assert counts == [1, 1] and first == second == "my-academic"
    flow = template_flow.checked(template.parse(path.read_bytes(), "my-academic.yaml"), sd.store.cache_dir)
    assert counts == [1, 1] and flow.complete and flow.dead_ends == [] and flow.states > 5  # read, not explored

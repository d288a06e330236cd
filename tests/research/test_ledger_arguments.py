"""The ledger's Python API takes `statedir research`'s flag names (the older names as aliases), and
answers a wrong call with statedir's typed errors, worded for Python: never a raw TypeError."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir.errors import InvalidValue, StatedirError
from statedir.research import Ledger
from tests.support.util import cli_json, snapshot


def test_the_flag_names_work_as_arguments(ledger: Ledger) -> None:
    run = ledger.start_run("deep-research", question="Does this need offline support?")
    assert ledger.query(question_id=run["question_id"])["questions"][0]["text"] == "Does this need offline support?"
    claim = ledger.record_claim(run["id"], "Region X diverges", confidence="high", evidence="notes.md")
    assert claim["evidence_ref"] == "notes.md"
    question = ledger.create_question(question="Which regions?", skill="deep-research")
    assert question["text"] == "Which regions?" and question["origin_skill"] == "deep-research"
    project = ledger.create_project("p", skill="lit-review")
    assert project["created_by"] == "lit-review"


def test_the_older_names_still_work(ledger: Ledger) -> None:
    run = ledger.start_run("deep-research", question_text="Q?")
    assert ledger.record_claim(run["id"], "s", evidence_ref="ref.md")["evidence_ref"] == "ref.md"
    assert ledger.create_question("Q2?", "sk")["origin_skill"] == "sk"


@pytest.mark.parametrize("call, words", [
    (lambda ledger: ledger.start_run(question="no skill"), "missing a required argument: 'skill'"),
    (lambda ledger: ledger.start_run("s", questoin="typo"), "unexpected keyword argument 'questoin'"),
    (lambda ledger: ledger.start_run("s", question="a", question_text="b"), "give question= or question_text="),
    (lambda ledger: ledger.create_question(), "needs question="),
    (lambda ledger: ledger.start_run("s", question="a", question_id="q_20260101_abcdef"),
     "question= and question_id= are mutually exclusive"),
    (lambda ledger: ledger.query(), "query() takes exactly one of run_id=, question_id="),
    (lambda ledger: ledger.record_result("run_20260101_abcdef", "s", artifact_role="r"),
     "artifact_role= and artifact_path= must be given together"),
])
def test_a_wrong_call_is_a_typed_error_in_the_apis_words(ledger: Ledger, store: Path, call, words: str) -> None:
    ledger.rebuild_index()
    before = snapshot(store.parent)
    with pytest.raises(StatedirError) as refused:
        call(ledger)
    assert isinstance(refused.value, InvalidValue) and words in refused.value.message, refused.value.message
    assert "--" not in refused.value.message
    assert snapshot(store.parent) == before


def test_the_cli_keeps_its_flags_in_the_same_refusal(store: Path) -> None:
    code, out = cli_json("research", "--start-run", "--skill", "s", "--question", "a", "--question-id",
                         "q_20260101_abcdef", cwd=store.parent)
    assert code == 2 and out["message"] == "--question and --question-id are mutually exclusive"  # type: ignore[index]


def test_an_engine_refusal_is_worded_for_the_api_too(store: Path) -> None:
    import statedir

    sd = statedir.open(store)
    with pytest.raises(InvalidValue, match=r"needs topic= \(what the run is about\)"):
        sd.new("r1")
    code, out = cli_json("new", "r1", cwd=store.parent)
    assert code == 2 and "needs --topic" in out["error"]["message"]  # type: ignore[index]

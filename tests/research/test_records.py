"""Any text a caller gives comes back unchanged: from the command's result, from the file
(statedir's own reader and ruamel agree), and from the index."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statedir.files import yaml, yaml_fast_reader
from statedir.research import Ledger
from statedir.research.kinds import KINDS
from statedir.store.layout import schema_ref

TEXT = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != "")
# A skill's name is the actor its writes are recorded as: an identifier (anything else is INVALID_ID).
SKILL = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,39}", fullmatch=True)


# Slow: a property test (hypothesis: many generated cases)
@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=TEXT, skill=SKILL, mode=st.one_of(st.none(), TEXT))
def test_text_round_trips_through_file_and_index(ledger: Ledger, question: str, skill: str, mode: str | None) -> None:
    run = ledger.start_run(skill, mode=mode, question_text=question)
    rel = KINDS["question"].rel(run["question_id"])
    raw = ledger.store.path(rel).read_bytes()
    own = yaml_fast_reader.read_own(raw, schema_ref(rel))
    assert own is not yaml_fast_reader.FOREIGN and own["text"] == question
    assert yaml.to_plain(yaml.load(raw, rel)) == own  # ruamel reads the same record
    [row] = ledger.query(question_id=run["question_id"])["questions"]
    assert row["text"] == question and row["origin_skill"] == skill
    [stored] = ledger.query(run_id=run["id"])["runs"]
    assert (stored["skill"], stored["mode"]) == (skill, mode)

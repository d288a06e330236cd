"""The pure half of the bus: session ids, dotted fields, and the decision of a set or append."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statedir.bus import fields, session
from statedir.errors import IllegalTransition, ImmutableField, InvalidId, InvalidValue, ValidationFailed
from statedir.files import schema

S = "2026-06-30-x"


@pytest.mark.parametrize("good", ["2026-06-30-member-blog-gating", "2024-02-29-a", "2026-01-01-v1.2_fix-3",
                                  "2026-11-30-" + "a" * 117])
def test_session_ids_of_the_seed_convention(good: str) -> None:
    assert session.check_session(good) == good
    assert session.rel_path(good) == f"bus/{good}.yaml"


@pytest.mark.parametrize("bad", ["", "member-blog", "2026-06-30", "2026-06-30-", "2026-13-01-x", "2025-02-29-x",
                                 "2026-06-30-../x", "../2026-06-30-x", "2026-06-30-a/b", "2026-06-30-.hidden",
                                 "2026-06-30-a b", "2026-06-30-x\x00", "2026-06-30-x\n", "2026-06-30-x:y",
                                 "2026-11-30-" + "a" * 118, "２０２６-06-30-x", "2026-06-30-é"])
def test_other_session_ids_are_invalid(bad: str) -> None:
    with pytest.raises(InvalidId):
        session.check_session(bad)


@pytest.mark.parametrize("bad", ["", ".", "a.", ".a", "a..b", "a b", "a/b", "-a", "a\x00", "é", "a.b" + ".c" * 16])
def test_fields_are_dotted_keys(bad: str) -> None:
    with pytest.raises(InvalidValue):
        fields.parse(bad)


def test_lookup_walks_mappings_and_list_indexes() -> None:
    doc = {"phases": {"1-design": {"evidence": ["a", "b"]}}, "k": "v"}
    assert fields.lookup(doc, ["phases", "1-design", "evidence", "1"]) == "b"
    assert fields.lookup(doc, ["phases", "1-design", "evidence", "2"]) is fields.MISSING
    assert fields.lookup(doc, ["k", "x"]) is fields.MISSING
    assert fields.lookup(doc, ["nope"]) is fields.MISSING


def test_set_makes_nested_entries_and_replaces_whatever_was_there() -> None:
    doc = session.fresh(S)
    doc = fields.decide(doc, ["phases", "1-design", "status"], "in_progress", append=False)
    doc = fields.decide(doc, ["phases", "1-design", "evidence"], ".ai_log/x.md", append=True)
    doc = fields.decide(doc, ["phases", "1-design", "outputs", "gate"], "pass", append=False)
    doc = fields.decide(doc, ["list"], "a", append=True)
    doc = fields.decide(doc, ["list"], "now a string", append=False)
    assert doc == {"session": S, "phases": {"1-design": {"status": "in_progress", "evidence": [".ai_log/x.md"],
                                                         "outputs": {"gate": "pass"}}}, "list": "now a string"}


def test_decide_never_changes_its_input() -> None:
    old = {"session": S, "phases": {}, "ev": ["a"]}
    fields.decide(old, ["ev"], "b", append=True)
    assert old == {"session": S, "phases": {}, "ev": ["a"]}


def test_append_to_a_string_or_a_mapping_is_refused() -> None:
    doc = {"session": S, "phases": {}, "k": "v", "m": {"x": "y"}}
    for field in (["k"], ["m"]):
        with pytest.raises(fields.WrongType) as caught:
            fields.decide(doc, field, "x", append=True)
        assert caught.value.exit_code == 1
    with pytest.raises(fields.WrongType):  # a dotted field through a string
        fields.decide(doc, ["k", "deeper"], "x", append=False)


def test_phase_statuses_move_forward_only() -> None:
    assert fields.status_order() == ("todo", "in_progress", "done")
    doc = session.fresh(S)
    path = ["phases", "1-design", "status"]
    for status in ("todo", "todo", "in_progress", "done", "done"):
        doc = fields.decide(doc, path, status, append=False)
    for back in ("in_progress", "todo"):
        with pytest.raises(IllegalTransition) as caught:
            fields.decide(doc, path, back, append=False)
        assert caught.value.exit_code == 1
    assert fields.decide(session.fresh(S), path, "done", append=False)  # skipping ahead is forward


@pytest.mark.parametrize("field,value,append", [
    (["phases", "1-design", "status"], "finished", False),     # not a status of the lifecycle
    (["phases", "1-design", "stauts"], "done", False),         # not a field of a phase entry
    (["phases", "1-design", "evidence"], "x", False),          # evidence is a list
    (["phases", "1-design", "outputs"], "x", True),            # outputs is a mapping
    (["phases", "1-design"], "x", False),                      # an entry is a mapping
    (["phases"], "x", False),
])
def test_the_phase_entry_shape_is_validated(field: list[str], value: str, append: bool) -> None:
    with pytest.raises(ValidationFailed) as caught:
        fields.decide(session.fresh(S), field, value, append=append)
    assert caught.value.exit_code == 1 and caught.value.details["errors"]


def test_the_session_field_is_the_id() -> None:
    with pytest.raises(ImmutableField):
        fields.decide(session.fresh(S), ["session"], "2026-01-01-other", append=False)


def test_the_seed_state_schema_example_is_valid() -> None:
    """The top-level shape of the seed's references/state-schema.md."""
    example = {
        "session": "2026-06-30-member-blog-gating", "session_dir": "docs/sessions/2026-06-30-member-blog-gating/",
        "user_request": "Gate the member blog behind an active subscription.",
        "prd_document": "docs/prd/member-blog-gating.md", "backend_code": ".ai_log/phase-3-backend-ror-manifest.md",
        "phases": {
            "0-requirements": {"agent": "pm-ror", "status": "done",
                               "outputs": {"prd_document": "docs/prd/member-blog-gating.md"},
                               "evidence": [".ai_log/phase-0-pm-ror-prd.md"],
                               "work_items": ["docs/epics/member-blog-gating.md"]},
            "5-verification": {"agent": "architect-ror", "status": "done",
                               "outputs": {"gate": "pass", "verification_report": ".ai_log/x.md"},
                               "evidence": [".ai_log/a.log", ".ai_log/b.png"], "work_items": []}}}
    assert schema.validate("bus-session", example) == []


keys = st.sampled_from(["a", "b", "ev", "phase-0-evidence"])
ops = st.lists(st.tuples(st.sampled_from(["set", "append"]), keys, st.text(max_size=8)), max_size=12)


# Slow: a property test (hypothesis: many generated cases), ~2 CPU-s
@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(ops=ops)
def test_flat_fields_behave_as_the_seeds_jq(ops: list[tuple[str, str, str]]) -> None:
    """A model of the seed's two jq programs: `.[$k] = $v` and `.[$k] = ((.[$k] // []) + [$v])`."""
    model: dict[str, object] = {"session": S, "phases": {}}
    doc = session.fresh(S)
    for verb, key, value in ops:
        if verb == "set":
            model[key] = value
        else:
            current = model.get(key)
            if current is not None and not isinstance(current, list):  # jq: string + array fails
                with pytest.raises(fields.WrongType):
                    fields.decide(doc, [key], value, append=True)
                continue
            model[key] = [*(current or []), value]
        doc = fields.decide(doc, [key], value, append=verb == "append")
        assert doc == model

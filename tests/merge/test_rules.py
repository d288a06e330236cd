"""The merge rules: every schema field has one, and the driver merges one file by them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statedir import request_ids
from statedir.engine import template
from statedir.engine.template import compiled as compile_mod
from statedir.errors import BadFile, UnresolvedMerge
from statedir.files import schema, yaml
from statedir.merge import driver, logs, rules
from statedir.store import layout


def test_every_property_of_every_schema_has_a_merge_rule() -> None:
    missing = {name: rules.walk_missing(schema.load_schema(name)) for name in schema.schema_names()}
    assert {k: v for k, v in missing.items() if v} == {}
    for name in schema.schema_names():
        assert schema.load_schema(name).get("x-merge") in rules.RULES, f"{name}: no rule for the document"


def test_the_walk_finds_a_property_without_a_rule() -> None:
    doc = {"properties": {"a": {"x-merge": "max"}, "b": {"type": "object", "properties": {"c": {}}}}}
    assert rules.walk_missing(doc) == ["$.b", "$.b.c"]


@pytest.mark.parametrize("name", sorted(template.shipped()))
def test_compiled_template_schemas_carry_the_rules(name: str) -> None:
    compiled = compile_mod.compile_schemas(template.load(name))
    assert compiled
    for kind, doc in compiled.items():
        assert rules.walk_missing(doc) == [], kind
    state = compiled["run-state"]["properties"]
    assert all(p["x-merge"] == "max" for p in state["version_counters"]["properties"].values())


def _state(**fields: object) -> bytes:
    base = {"run_id": "r1", "template": "academic-pipeline", "topic": "t", "current_stage": "1",
            "checkpoints_opened": 0, "version_counters": {}, "updated_at": "2026-01-01T00:00:00Z"}
    return yaml.dump({**base, **fields}, layout.schema_ref("runs/r1/state.yaml")).encode()


def _plain(raw: bytes) -> object:
    return yaml.to_plain(yaml.load(raw, "x"))


def test_fields_merge_by_their_rules() -> None:
    base = _state()
    ours = _state(topic="new", checkpoints_opened=2, version_counters={"draft": 1},
                  updated_at="2026-01-02T00:00:00Z")
    theirs = _state(checkpoints_opened=1, version_counters={"draft": 2, "review": 1},
                    updated_at="2026-01-03T00:00:00Z")
    out = driver.merge_file("runs/r1/state.yaml", base, ours, theirs)
    assert out.clean
    merged = _plain(out.data)
    assert merged["topic"] == "new"  # one side's change
    assert merged["checkpoints_opened"] == 2  # max
    assert merged["version_counters"] == {"draft": 2, "review": 1}  # by key, each the max
    assert merged["updated_at"] == "2026-01-03T00:00:00Z"
    assert out.data.startswith(yaml.header(layout.schema_ref("runs/r1/state.yaml")).encode())


def test_two_different_changes_to_a_conflict_field_are_refused_naming_it() -> None:
    out = driver.merge_file("runs/r1/state.yaml", _state(), _state(topic="A", current_stage="2"),
                            _state(topic="B", current_stage="2"))
    assert not out.clean
    assert [(c.path, c.ours, c.theirs) for c in out.conflicts] == [("topic", "A", "B")]


def test_an_immutable_field_written_differently_on_both_sides_is_refused() -> None:
    ref = layout.schema_ref("runs/r1/materials/draft_v2.yaml")
    ours = yaml.dump({"version_label": "draft_v2", "content_hash": "a" * 64}, ref).encode()
    theirs = yaml.dump({"version_label": "draft_v2", "content_hash": "b" * 64}, ref).encode()
    out = driver.merge_file("runs/r1/materials/draft_v2.yaml", None, ours, theirs)
    assert [c.path for c in out.conflicts] == ["content_hash"]
    report = driver.report("runs/r1/materials/draft_v2.yaml", out, ours, None, theirs)
    assert ours in report and theirs in report  # nothing of either side is lost
    with pytest.raises(UnresolvedMerge, match="unresolved merge of .*draft_v2.yaml"):
        yaml.load(report, "runs/r1/materials/draft_v2.yaml")


@pytest.mark.parametrize(("ours", "theirs", "merged"), [
    ("in_progress", "pending", "in_progress"), ("completed", "in_progress", "completed"),
    ("in_progress", "completed", "completed"), ("skipped", "in_progress", None), ("blocked", "in_progress", None)])
def test_a_stage_status_takes_the_one_further_along_the_moves(ours: str, theirs: str, merged: str | None) -> None:
    further = rules.further_by_moves(template.load("academic-pipeline").moves)
    ctx = rules.Context(root={}, further=further)
    node = {"x-merge": "furthest"}
    value = rules.merge("pending", ours, theirs, node, ctx, "status")
    assert (None if ctx.conflicts else value) == merged


def _log(entries: list[dict[str, object]]) -> bytes:
    ref = layout.schema_ref("runs/r1/history/transitions.yaml")
    return (yaml.header(ref) + "".join(yaml.dump_entry(e) for e in entries)).encode()


IDS = [request_ids.new() for _ in range(8)]  # made in this order: each sorts after the one before
ENTRY = st.fixed_dictionaries({"at": st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z",
                                                        "2026-01-02T00:00:00Z"]),
                               "actor": st.sampled_from(["a", "b"]), "action": st.just("stage"),
                               "summary": st.sampled_from(["x", "y"]), "reason": st.sampled_from([None, "r"])},
                              optional={"request_id": st.sampled_from(IDS)})


# Slow: a property test (hypothesis: many generated cases)
@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(ENTRY, max_size=5), st.lists(ENTRY, max_size=5), st.lists(ENTRY, max_size=5))
def test_log_merges_are_a_union_in_any_order(a: list, b: list, c: list) -> None:
    x, y, z = _log(a), _log(b), _log(c)
    rel = "runs/r1/history/transitions.yaml"
    ab_c = logs.merge(rel, None, logs.merge(rel, None, x, y), z)
    a_bc = logs.merge(rel, None, x, logs.merge(rel, None, y, z))
    c_ba = logs.merge(rel, None, z, logs.merge(rel, None, y, x))
    assert ab_c == a_bc == c_ba  # associative and commutative
    merged = _plain(ab_c) or []
    ids = [rules.identity(e) for e in merged]
    assert len(ids) == len(set(ids)) and set(ids) == {rules.identity(e) for e in a + b + c}  # each once, none lost
    assert [e["at"] for e in merged] == sorted(e["at"] for e in merged)  # time order


def _written(entries: list[dict[str, object]]) -> list[dict[str, object]]:
    """A side's log as one clone writes it: in time order, each entry its own request id."""
    ordered = sorted(entries, key=lambda e: str(e["at"]))
    return [{**e, "request_id": request_ids.new()} for e in ordered]


# Slow: a property test (hypothesis: many generated cases)
@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(ENTRY, max_size=5), st.lists(ENTRY, max_size=5), st.lists(ENTRY, max_size=5))
def test_log_merges_keep_every_transition_in_the_order_each_side_wrote_it(a: list, b: list, c: list) -> None:
    """Entries alike in all but their request id (the same move, the same second, on two
    machines or twice on one) are all kept, and each side's entries keep their order."""
    a, b, c = _written(a), _written(b + a[:2]), _written(c + c[:1])  # alike content on several sides
    x, y, z = _log(a), _log(b), _log(c)
    rel = "runs/r1/history/transitions/2026-01-01.yaml"
    ab_c = logs.merge(rel, None, logs.merge(rel, None, x, y), z)
    assert ab_c == logs.merge(rel, None, x, logs.merge(rel, None, y, z)) == logs.merge(rel, None, z,
                                                                                       logs.merge(rel, None, y, x))
    merged = _plain(ab_c) or []
    assert len(merged) == len(a) + len(b) + len(c)
    for side in (a, b, c):
        ids = [e["request_id"] for e in side]
        assert [e["request_id"] for e in merged if e["request_id"] in ids] == ids


def test_log_entries_keep_their_own_text() -> None:
    rel = "runs/r1/history/transitions.yaml"
    first = {"at": "2026-01-01T00:00:00Z", "actor": "a", "action": "new", "summary": "s"}
    a = {"at": "2026-01-02T00:00:00Z", "actor": "a", "action": "stage", "summary": "s", "reason": "from A"}
    b = {"at": "2026-01-02T00:00:00Z", "actor": "a", "action": "stage", "summary": "s", "reason": "from B"}
    out = driver.merge_file(rel, _log([first]), _log([first, a]), _log([first, b]))
    assert out.clean and _plain(out.data) == [first, a, b]
    assert out.data == _log([first, a, b])


@pytest.mark.usefixtures("isolated")
def test_the_old_union_merge_breaks_what_the_driver_keeps(tmp_path: Path) -> None:
    """The issue's case at the file level: two transitions in the same second on one run.
    git's `merge=union` interleaves them into one entry holding `reason: from A` and `reason:
    from B` (a duplicate key: one transition lost); the driver keeps both, each once."""
    import subprocess

    rel = "runs/r1/history/transitions.yaml"
    first = {"at": "2026-01-01T00:00:00Z", "actor": "a", "action": "new", "summary": "s", "reason": None}
    a = {"at": "2026-01-02T00:00:00Z", "actor": "a", "action": "set", "summary": "set topic", "reason": "from A"}
    b = {**a, "reason": "from B"}
    sides = []
    for name, data in (("ours", _log([first, a])), ("base", _log([first])), ("theirs", _log([first, b]))):
        (tmp_path / name).write_bytes(data)
        sides.append(str(tmp_path / name))
    union = subprocess.run(["git", "merge-file", "-p", "--union", *sides], capture_output=True, check=True).stdout
    assert union.count(b"action: set") == 1 and b"reason: from A" in union and b"reason: from B" in union
    with pytest.raises(BadFile, match="duplicate key"):
        yaml.load(union, rel)
    out = driver.merge_file(rel, _log([first]), _log([first, a]), _log([first, b]))
    assert out.clean and _plain(out.data) == [first, a, b]
    assert not schema.validate("log-transitions", _plain(out.data), rel)


@pytest.mark.usefixtures("isolated")
def test_a_file_statedir_does_not_own_gets_a_line_merge() -> None:
    out = driver.merge_file("notes/x.yaml", b"a\nb\nc\n", b"A\nb\nc\n", b"a\nb\nC\n")
    assert out.clean and out.data == b"A\nb\nC\n"
    out = driver.merge_file("notes/x.yaml", b"a\n", b"A\n", b"B\n")
    assert not out.clean and b"<<<<<<<" in out.data


def test_a_side_that_cannot_be_read_is_refused_not_guessed(tmp_path: Path) -> None:
    out = driver.merge_file("runs/r1/state.yaml", _state(), _state(topic="x"), b"a: [unclosed\n")
    assert not out.clean and out.note and "cannot be read" in out.note


def test_bad_yaml_is_still_a_syntax_error_not_an_unresolved_merge() -> None:
    with pytest.raises(BadFile) as caught:
        yaml.load(b"a: [unclosed\n", "f.yaml")
    assert not isinstance(caught.value, UnresolvedMerge)
    assert json.dumps(caught.value.as_json())


@pytest.mark.usefixtures("isolated")
def test_what_a_file_is_comes_from_the_store_schema_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file merges as a log as soon as the store's schema lookup names it one (a day segment,
    `history/<log>/<day>.yaml`, does): the driver has no path of its own."""
    import re

    a = {"at": "2026-01-02T00:00:00Z", "actor": "a", "action": "set", "summary": "s", "reason": "from A"}
    b = {**a, "reason": "from B"}
    segment = driver.merge_file("runs/r1/history/transitions/2026-01-02.yaml", _log([]), _log([a]), _log([b]))
    assert segment.clean and _plain(segment.data) == [a, b]
    rel = "runs/r1/archive/transitions/2026-01-02.yaml"  # a layout no statedir writes
    before = driver.merge_file(rel, _log([]), _log([a]), _log([b]))
    assert not before.clean  # not a store file: git's line merge conflicts
    archive = (re.compile(r"^runs/[^/]+/archive/(?P<log>[^/]+)/[^/]+\.yaml$"), "log-{log}")
    monkeypatch.setattr(layout, "SCHEMA_OF", (*layout.SCHEMA_OF, archive))
    after = driver.merge_file(rel, _log([]), _log([a]), _log([b]))
    assert after.clean and _plain(after.data) == [a, b]


def test_an_entry_that_vanished_from_one_side_is_kept() -> None:
    rel = "runs/r1/history/transitions.yaml"
    first = {"at": "2026-01-01T00:00:00Z", "actor": "a", "action": "new", "summary": "s"}
    x = {"at": "2026-01-02T00:00:00Z", "actor": "a", "action": "stage", "summary": "x"}
    b = {"at": "2026-01-03T00:00:00Z", "actor": "b", "action": "stage", "summary": "b"}
    out = driver.merge_file(rel, _log([first, x]), _log([first]), _log([first, x, b]))
    assert out.clean and _plain(out.data) == [first, x, b]


def _stage(**fields: object) -> bytes:
    base = {"id": "1", "name": "Research", "status": "pending", "outputs": [], "started_at": None,
            "completed_at": None, "decision": None}
    return yaml.dump({**base, **fields}, layout.schema_ref("runs/r1/stages/1.yaml")).encode()


def test_the_same_stage_move_on_both_sides_merges_started_at_the_earlier_completed_at_the_later() -> None:
    rel = "runs/r1/stages/1.yaml"
    started = driver.merge_file(rel, _stage(), _stage(status="in_progress", started_at="2026-01-01T00:00:01Z"),
                                _stage(status="in_progress", started_at="2026-01-01T00:00:00Z"))
    assert started.clean and _plain(started.data)["started_at"] == "2026-01-01T00:00:00Z"
    begun = {"status": "in_progress", "started_at": "2026-01-01T00:00:00Z"}
    done = driver.merge_file(rel, _stage(**begun),
                             _stage(**{**begun, "status": "completed", "completed_at": "2026-01-01T00:00:05Z"}),
                             _stage(**{**begun, "status": "completed", "completed_at": "2026-01-01T00:00:07Z"}))
    assert done.clean and _plain(done.data)["completed_at"] == "2026-01-01T00:00:07Z"
    # two different decisions on one review are still refused, naming the field
    decided = driver.merge_file(rel, _stage(**begun), _stage(**begun, decision="accept"),
                                _stage(**begun, decision="major_revision"))
    assert [(c.path, c.rule) for c in decided.conflicts] == [("decision", "conflict")]


def test_an_open_checkpoint_merges_field_by_field() -> None:
    checkpoint = {"stage": "1", "type": "FULL", "opened_at": "2026-01-01T00:00:05Z", "awareness_prompt": False,
                  "choices": ["2"], "default": "2", "terminal": False}
    out = driver.merge_file("runs/r1/state.yaml", _state(checkpoint=None, checkpoints_opened=0),
                            _state(checkpoint=checkpoint, checkpoints_opened=1),
                            _state(checkpoint={**checkpoint, "opened_at": "2026-01-01T00:00:07Z"},
                                   checkpoints_opened=1))
    assert out.clean
    merged = _plain(out.data)
    assert merged["checkpoint"]["opened_at"] == "2026-01-01T00:00:07Z" and merged["checkpoints_opened"] == 1
    other = driver.merge_file("runs/r1/state.yaml", _state(checkpoint=None), _state(checkpoint=checkpoint),
                              _state(checkpoint={**checkpoint, "stage": "2"}))
    assert [c.path for c in other.conflicts] == ["checkpoint.stage"]


def _session(**fields: object) -> bytes:
    rel = "bus/2026-01-01-s.yaml"
    return yaml.dump({"session": "2026-01-01-s", "phases": {}, **fields}, layout.schema_ref(rel)).encode()


@pytest.mark.parametrize(("ours", "theirs", "merged"), [
    (["a", "x"], ["a", "y"], ["a", "x", "y"]),
    (["a", "y", "z"], ["a", "x"], ["a", "y", "z", "x"]),  # ours, then what theirs added, in its order
    (["a", "x"], ["a", "x", "y"], ["a", "x", "y"]),  # the same entry on both sides: once
    (["a", "x", "x"], ["a", "x"], ["a", "x", "x"]),  # appended twice on one side: twice
    (["q", "a", "p"], ["r", "a"], ["q", "a", "p", "r"]),  # an earlier merge put entries before the base's
    (["b"], ["a", "y"], None),  # an entry of the base gone: not a list that only grew
])
@pytest.mark.parametrize("where", ["notes", "evidence", "outputs"])
def test_a_bus_list_that_only_grew_on_both_sides_keeps_both(where: str, ours: list, theirs: list,
                                                            merged: list | None) -> None:
    def side(items: list) -> bytes:
        if where == "notes":  # a run variable: `bus append S notes VALUE`
            return _session(notes=items)
        if where == "outputs":  # a list in a mapping of a phase: `bus append S phases.1-d.outputs.f VALUE`
            return _session(phases={"1-d": {"outputs": {"f": items}}})
        return _session(phases={"1-d": {"evidence": items}})

    rel = "bus/2026-01-01-s.yaml"
    out = driver.merge_file(rel, side(["a"]), side(ours), side(theirs))
    if merged is None:
        assert not out.clean and [c.rule for c in out.conflicts] == ["grow"]
        return
    assert out.clean
    data = _plain(out.data)
    phase = data["phases"].get("1-d", {})
    assert {"notes": data.get("notes"), "evidence": phase.get("evidence"),
            "outputs": phase.get("outputs", {}).get("f")}[where] == merged

"""Guarded YAML: hostile documents are BAD_FILE naming the line; our dumps are stable."""
from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statedir.errors import BadFile
from statedir.files import yaml, yaml_emit, yaml_fast_reader

HOSTILE = {
    "unclosed bracket": b"a: [1, 2\n",
    "python tag": b"a: !!python/object/apply:os.system ['echo hi']\n",
    "custom tag": b"a: !secret x\n",
    "alias bomb": b"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n",
    "invalid utf-8": b"a: \xff\xfe\n",
    "duplicate keys": b"a: 1\nb: 2\na: 3\n",
    "deep nesting": b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "deep block nesting": b"".join(b"  " * i + b"k:\n" for i in range(200)) + b"  " * 200 + b"v\n",
    "nested complex keys": b"{" * 40 + b"}" * 40,
    "nul byte": b"a: b\x00c\n",
    "two documents": b"a: 1\n---\nb: 2\n",
    "huge": b"a: '" + b"x" * (yaml.MAX_BYTES + 1) + b"'\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_yaml_is_a_clear_error_fast(name: str) -> None:
    start = time.process_time()
    with pytest.raises(BadFile) as info:
        yaml.load(HOSTILE[name], "f.yaml")
    assert info.value.message.startswith("f.yaml")
    assert time.process_time() - start < 30  # a guard against hangs, not a performance claim


def test_errors_name_the_line() -> None:
    with pytest.raises(BadFile) as info:
        yaml.load(b"a: 1\nb: 2\na: 3\n", "f.yaml")
    assert info.value.details["line"] == 3


def test_header_is_dropped_on_load_and_written_on_dump() -> None:
    text = yaml.dump({"a": 1, "b": [{"c": None}]}, "x.schema.json")
    assert text.splitlines()[0] == "# yaml-language-server: $schema=x.schema.json"
    assert yaml.dump(yaml.to_plain(yaml.load(text)), "x.schema.json") == text


def test_appended_entries_read_back_as_one_list() -> None:
    text = yaml.header("log.json")
    entries = [{"at": "2026-01-01T00:00:00Z", "n": i, "tags": ["a", "b"], "none": None} for i in range(3)]
    for entry in entries:
        text += yaml.dump_entry(entry)
    assert yaml.to_plain(yaml.load(text)) == entries
    assert yaml.dump(yaml.to_plain(yaml.load(text)), "log.json") == text


def test_merge_keeps_comments_and_order() -> None:
    doc = yaml.load("# yaml-language-server: $schema=s\nb: 1  # keep me\na: [1, 2]\n")
    merged = yaml.merge(doc, {"b": 2, "a": [1, 2], "c": "new"})
    assert yaml.dump(merged, "s") == "# yaml-language-server: $schema=s\nb: 2  # keep me\na: [1, 2]\nc: new\n"


plain = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=10),
                                                                      children, max_size=4),
    max_leaves=20)


# Slow: a property test (hypothesis: many generated cases), ~2 CPU-s
@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=10), plain, max_size=6))
def test_round_trip_of_any_plain_mapping(data: dict) -> None:
    text = yaml.dump(data, "s.json")
    assert yaml.to_plain(yaml.load(text)) == data
    assert yaml.dump(yaml.to_plain(yaml.load(text)), "s.json") == text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_load_or_fail_cleanly(raw: bytes) -> None:
    try:
        yaml.load(raw, "f.yaml")
    except BadFile:
        pass


any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
tricky = st.sampled_from(["", " ", "true", "No", "null", "~", "1", "2.5", "1e3", "0x1f", ".inf", "-", "- a", "a: b",
                          "#x", "x #y", "'q'", '"d"', "a\nb", " lead", "trail ", "2026-11-29T19:19:27Z",
                          "2026-11-29", "[a]", "{a}", "@x", "%x", "!x", "&x", "*x", "|", ">", "?", ",", "\t",
                          "\x85", "\u2028", "é", "Stage 3' decision", "turns #1..#2", "paper_draft_v1", "/tmp/x"])
emittable = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | any_text | tricky,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text | tricky, children, max_size=4),
    max_leaves=25)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.dictionaries(any_text | tricky, emittable, max_size=6) | st.lists(emittable, max_size=4))
def test_the_emitter_is_read_back_exactly_by_ruamel(data: object) -> None:
    text = yaml_emit.emit(data)
    assert yaml.to_plain(yaml.load(text)) == data, text
    assert yaml_emit.emit(yaml.to_plain(yaml.load(text))) == text


def test_the_emitter_writes_block_style_like_the_round_trip_dumper() -> None:
    data = {"run_id": "r1", "stages": {"2.5": {"outputs": ["a", "b"], "empty": []}}, "m": {},
            "log": [{"at": "2026-11-29T19:19:27Z", "n": 1, "tags": ["x"]}], "none": None}
    assert yaml_emit.emit(data) == (
        "run_id: r1\nstages:\n  '2.5':\n    outputs:\n      - a\n      - b\n    empty: []\nm: {}\n"
        "log:\n  - at: '2026-11-29T19:19:27Z'\n    'n': 1\n    tags:\n      - x\nnone: null\n")


REF = "../.schemas/stage.schema.json"


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.none() | st.dictionaries(any_text | tricky, emittable, max_size=6) | st.lists(emittable, max_size=4))
def test_statedirs_own_output_is_read_without_ruamel(data: object) -> None:
    assert yaml_fast_reader.read_own(yaml.dump(data, REF).encode(), REF) == data


edits = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3),
                           st.text(st.sampled_from(" -:'\"\\\n#a1{}[]&*!|>x\tu"), max_size=3)), min_size=1, max_size=3)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.dictionaries(any_text | tricky, emittable, min_size=1, max_size=6) | st.lists(emittable, min_size=1,
                                                                                         max_size=4), edits)
def test_the_own_reader_never_reads_text_differently_from_ruamel(data: object, changes: list) -> None:
    """Edited text is either left to ruamel (FOREIGN) or read exactly as ruamel reads it."""
    text = yaml.dump(data, REF)
    head, body = text[:len(yaml.header(REF))], text[len(yaml.header(REF)):]
    for at, cut, insert in changes:
        at = at % (len(body) + 1)
        body = body[:at] + insert + body[at + cut:]
    raw = (head + body).encode()
    own = yaml_fast_reader.read_own(raw, REF)
    if own is yaml_fast_reader.FOREIGN:
        return
    assert own == yaml.to_plain(yaml.load(raw)), head + body


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_yaml_is_foreign_to_the_own_reader(name: str) -> None:
    assert yaml_fast_reader.read_own(yaml.header(REF).encode() + HOSTILE[name], REF) is yaml_fast_reader.FOREIGN


def test_text_without_statedirs_header_or_with_comments_is_foreign() -> None:
    body = b"a: 1\n"
    assert yaml_fast_reader.read_own(body, REF) is yaml_fast_reader.FOREIGN
    assert yaml_fast_reader.read_own(yaml.header(REF).encode() + b"a: 1  # why\n", REF) is yaml_fast_reader.FOREIGN
    assert yaml_fast_reader.read_own(yaml.header(REF).encode() + b"a: [1]\n", REF) is yaml_fast_reader.FOREIGN
    assert yaml_fast_reader.read_own(yaml.header(REF).encode() + body, REF) == {"a": 1}

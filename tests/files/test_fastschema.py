"""The compiled validators agree with jsonschema on every schema statedir ships."""
from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from statedir.files import schema
from statedir.files.fastschema import compile_schema
from tests.support.util import FIXTURES

NAMES = schema.schema_names()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-3, 3, allow_nan=False)
    | st.sampled_from(["", "PASS", "FULL", "boundary", "2026-11-29T12:00:00Z", "paper_draft_v1", "r1",
                       "turns #1..#2", "0" * 64, "abc", "academic-pipeline", "pending", "x_v0"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["run_id", "stage", "status", "id", "name", "outputs", "kind", "hash", "at", "next",
                         "pending_decision", "advisory_only", "verdict", "x", "type", "materials", "version_label"]),
        children, max_size=5),
    max_leaves=12)


def mutate(doc: object, data: st.DataObject) -> object:
    """A real document with one value replaced somewhere: near-misses are where validators disagree."""
    if isinstance(doc, dict) and doc:
        key = data.draw(st.sampled_from(sorted(doc)))
        if data.draw(st.booleans()):
            return {**doc, key: mutate(doc[key], data)}
        return {**doc, key: data.draw(json_values)}
    if isinstance(doc, list) and doc:
        i = data.draw(st.integers(0, len(doc) - 1))
        return [*doc[:i], mutate(doc[i], data), *doc[i + 1:]]
    return data.draw(json_values)


@functools.cache
def real_documents() -> list[tuple[str, object]]:
    from statedir.engine import template
    from statedir.files import yaml

    docs: list[tuple[str, object]] = [("template", template.load(n).doc) for n in template.shipped()]
    fixtures = FIXTURES
    for path in sorted(fixtures.glob("*.json")):
        name = path.stem.split("__")[0]
        docs.append((name, json.loads(path.read_text())))
    del yaml
    return docs


@functools.cache
def official(name: str) -> Draft202012Validator:
    """jsonschema's validator of a schema, built once (hypothesis calls a test hundreds of times)."""
    return Draft202012Validator(schema.load_schema(name))


@functools.cache
def compiled(name: str):  # type: ignore[no-untyped-def]
    """statedir's compiled validator of a schema, built once."""
    return compile_schema(schema.load_schema(name))


# Slow: 300 random values against jsonschema for each of the ~23 schemas, ~20 CPU-seconds; the
# near-miss test below keeps the two validators compared in the fast subset (~2 s).
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values)
def test_random_values_agree(name: str, value: object) -> None:
    assert compiled(name)(value) == official(name).is_valid(value)


@pytest.mark.slow  # near misses of every shipped document, both validators
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_near_misses_of_real_documents_agree(data: st.DataObject) -> None:
    name, doc = data.draw(st.sampled_from(real_documents()))
    candidate = mutate(doc, data)
    assert compiled(name)(candidate) == official(name).is_valid(candidate)

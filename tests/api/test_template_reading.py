"""What an agent reads before it acts (statedir/api/template_reading.py): the templates by name,
shipped then the store's own, their rules as text, none read by path; statedir's schemas as filed."""
from __future__ import annotations

import json

import pytest

from statedir import api
from statedir.api import template_reading
from statedir.errors import StatedirError


def test_the_templates_are_named_shipped_first_then_the_stores_own(sd: api.StateDir) -> None:
    folder = sd.store.root / "templates"
    folder.mkdir(exist_ok=True)
    (folder / "broken.yaml").write_text("name: broken\nstages: [\n")  # named, not parsed
    (folder / "house@1.0.yaml").write_text("name: house\n")  # a version kept for old runs: not a template of its own
    names = template_reading.names(folder)
    assert names[0] == "academic-pipeline" and names[-1] == "broken" and "house@1.0" not in names
    assert template_reading.names(None) == names[:-1]
    with pytest.raises(StatedirError) as broken:
        template_reading.rules("broken", folder)
    assert broken.value.code == "BAD_FILE"


def test_a_templates_rules_and_description_and_no_file_by_path(sd: api.StateDir) -> None:
    rules = template_reading.rules("linear", None)
    assert rules.startswith("linear") and "PLAN" in rules
    described = template_reading.described(template_reading.named("linear", None))
    assert [s["id"] for s in described["stages"]] == ["plan", "build", "check", "deliver"]
    with pytest.raises(StatedirError):
        template_reading.named(str(sd.store.root.parent / "x.yaml"), None)


def test_a_schema_is_its_files_text() -> None:
    text = template_reading.schema_text("passport")
    assert json.loads(text)["type"] == "object"
    assert template_reading.BUS_SCHEMA_URI.startswith("statedir://")

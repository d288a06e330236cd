"""The vocabularies an argument's values come from (statedir/api/vocabularies.py): the union over
the templates a store holds, its own among them, and the fixed ones of the engine and research."""
from __future__ import annotations

from pathlib import Path

from statedir import api
from statedir.api import vocabularies

ROOT = Path(__file__).resolve().parents[2]


def test_a_templates_vocabulary_is_the_union_over_those_the_store_holds(sd: api.StateDir) -> None:
    root = sd.store.root
    before = vocabularies.signature(root)
    shipped = vocabularies.vocabularies(vocabularies.held(root))
    assert "2.5" in shipped["stage"][0] and shipped["stage"][1] is True
    assert "house_stage" not in shipped["stage"][0]
    (root / "templates").mkdir(exist_ok=True)
    (root / "templates" / "broken.yaml").write_text("name: broken\nstages: [\n")  # left out, not a refusal
    text = (ROOT / "templates" / "linear.yaml").read_text()
    assert "id: deliver," in text  # a stage of its own, renamed (its material with it)
    (root / "templates" / "house.yaml").write_text(text.replace("name: linear", "name: house", 1)
                                                   .replace("deliver", "house_stage"))
    assert vocabularies.signature(root) != before
    held = vocabularies.held(root)
    assert "house" in [t.name for t in held] and "broken" not in [t.name for t in held]
    assert "house_stage" in vocabularies.vocabularies(held)["stage"][0]


def test_the_fixed_vocabularies_are_the_engines_and_the_research_ledgers() -> None:
    found = vocabularies.vocabularies([])
    assert found["stage"] == ([], True)  # no template: no stage
    assert found["show_format"] == (list(vocabularies.SHOW_FORMATS), False)
    assert set(vocabularies.RUN_CLOSING_STATUSES) <= set(found["research_status"][0])
    assert found["stance"] == (list(vocabularies.STANCES), False) and found["graph_format"][0] == ["mermaid", "dot"]

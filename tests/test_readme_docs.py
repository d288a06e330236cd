"""The README documents what a newcomer needs: the template format key by key (its example a
valid template), the fast test subset, a pre-commit pin that exists."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from statedir.engine import template

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## Writing a template"):]


def _keys(node: dict, prefix: str = "") -> set[str]:  # type: ignore[type-arg]
    out = set()
    for key, sub in node.get("properties", {}).items():
        out.add(key)
        for inner in (sub, sub.get("items", {}), sub.get("additionalProperties") or {}):
            if isinstance(inner, dict) and "properties" in inner:
                out |= _keys(inner)
    return out


def test_every_template_key_is_documented() -> None:
    schema = json.loads((ROOT / "schemas/template.schema.json").read_text())
    keys = _keys(schema) | _keys(schema["$defs"]["condition"]) | _keys(schema["$defs"]["requirement"]["anyOf"][1])
    missing = sorted(k for k in keys if f"`{k}`" not in SECTION and not re.search(rf"\b{k}:", SECTION))
    assert not missing, f"README's template section does not document {missing}"


def test_the_readme_example_is_a_valid_template() -> None:
    example = SECTION[SECTION.index("```yaml") + len("```yaml\n"):]
    t = template.parse(example[:example.index("```")].encode(), "README example")
    assert t.name == "review-cycle" and t.required_run_fields == []


def test_the_fast_subset_is_documented_and_ci_runs_everything() -> None:
    assert '.venv/bin/pytest -m "not slow"' in README
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert any(m.startswith("slow:") for m in config["markers"]) and "-m" not in config.get("addopts", "")
    ci = (ROOT / ".ci/run").read_text()
    assert "&& .venv/bin/pytest\n" in ci  # the README's command, whole: no -m, every test


def test_the_pre_commit_example_pins_what_exists() -> None:
    rev = re.search(r"^\s+rev: (\S+)", README, re.M)
    assert rev and re.fullmatch(r"[0-9a-f]{40}", rev[1]), "pin a commit sha until a release is tagged"
    assert "until releases are tagged" in README

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


def test_the_template_section_runs_verbatim(isolated: Path) -> None:
    """The section's YAML block saved as ~/my.yaml, then its shell block run as written: the run
    it makes gets through its checkpoint (a template may leave logs out, never one it writes)."""
    import os
    import subprocess
    import sys

    yaml_block = SECTION[SECTION.index("```yaml\n") + len("```yaml\n"):]
    yaml_block = yaml_block[:yaml_block.index("```")]
    shell = SECTION[SECTION.index("```sh\n") + len("```sh\n"):]
    shell = shell[:shell.index("```")]
    (Path(os.environ["HOME"]) / "my.yaml").write_text(yaml_block)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=isolated, capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "REVIEW" in proc.stdout  # the dashboard, at the review stage the confirm moved to
    claim = re.search(r"`(statedir stage t1 ship done); echo \$\?` -> (\d)", shell)
    assert claim, "the shell block's closing claim"
    again = subprocess.run(["bash", "-c", shell.replace("statedir confirm t1 && statedir status t1",
                                                        claim[1] + "; echo $?")],
                           cwd=isolated, capture_output=True, text=True, env=env, timeout=300)
    assert again.stdout.strip().splitlines()[-1] == claim[2]

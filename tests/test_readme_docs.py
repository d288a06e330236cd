"""The README is a landing page whose examples run as written, linking a docs/ page per subsystem;
docs/templates.md documents the template format key by key (its example a valid template that runs);
the fast test subset and a pre-commit pin that exists are documented."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from statedir.engine import template
from tests.support.docs_text import DOCS, page

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
TEMPLATES = page("templates")
SECTION = TEMPLATES[TEMPLATES.index("## Writing a template"):]


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
    assert not missing, f"docs/templates.md's template section does not document {missing}"


def test_the_docs_example_is_a_valid_template() -> None:
    example = SECTION[SECTION.index("```yaml") + len("```yaml\n"):]
    t = template.parse(example[:example.index("```")].encode(), "docs/templates.md example")
    assert t.name == "review-cycle" and t.required_run_fields == []


def test_the_fast_subset_is_documented_and_ci_runs_everything() -> None:
    assert '.venv/bin/pytest -m "not slow"' in README
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert any(m.startswith("slow:") for m in config["markers"]) and "-m" not in config.get("addopts", "")
    ci = (ROOT / ".ci/run").read_text()
    assert re.search(r"^\.venv/bin/pytest$", ci, re.M)  # the README's command, whole: no -m, every test


def test_the_pre_commit_example_pins_what_exists() -> None:
    cli_page = page("cli")
    rev = re.search(r"^\s+rev: (\S+)", cli_page, re.M)
    assert rev and re.fullmatch(r"[0-9a-f]{40}", rev[1]), "pin a commit sha until a release is tagged"
    assert "until releases are tagged" in cli_page


@pytest.mark.slow  # runs a docs page's commands as written, each a CLI process
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


def test_the_readme_is_a_landing_page_linking_every_docs_page() -> None:
    """Short (what, set-up, a tour, links); every docs/ page linked from it, and every link resolves."""
    assert len(README.splitlines()) <= 150
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", README))
    assert {f"docs/{p.name}" for p in DOCS.glob("*.md")} <= linked, "a docs/ page the README does not link"
    for doc in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", doc.read_text()):
            assert (doc.parent / target).is_file(), f"{doc.name} links {target}, which does not exist"


def test_the_docs_name_the_original_tools_not_the_seed() -> None:
    from tests.support.docs_text import documentation

    text = documentation()
    assert not re.search(r"\bthe seeds?'?\b", text, re.I), "name the original tool instead of 'the seed'"
    for tool in ("hasbrains-agent-kit", "research-lab-skills", "academic-research-skills"):
        assert tool in README


@pytest.mark.slow  # runs a docs page's commands as written, each a CLI process
def test_the_readme_tour_runs_verbatim(isolated: Path) -> None:
    """The tour's shell blocks as written (sync and mcp need a remote and a client: left out), then the
    Python block: each command is the real CLI, and the refusal it shows is the exit code it claims."""
    import os
    import subprocess
    import sys

    tour = README[README.index("## A short tour"):README.index("## Where to read on")]
    blocks = re.findall(r"```sh\n(.*?)```", tour, re.S)
    shell = "\n".join(line for line in "".join(blocks).splitlines()
                      if not line.startswith(("statedir sync", "statedir mcp")))
    assert not list(isolated.iterdir()), "the tour starts where a reader starts: an empty folder"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=isolated, capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "refused: exit 1" in proc.stdout and "ILLEGAL_TRANSITION" in proc.stderr
    assert "verified" in proc.stdout and "clean" in proc.stdout
    code = re.findall(r"```python\n(.*?)```", tour, re.S)[0]
    other = isolated / "py"
    other.mkdir()
    proc = subprocess.run([sys.executable, "-c", code], cwd=other, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_help_texts_name_the_original_tools_not_the_seed() -> None:
    """No `--help` says "the seed" or a State Tracker function name (update_stage, ...)."""
    import click
    import typer.main

    from statedir.cli.registry import build

    def helps(command: click.Command, path: list[str]) -> list[tuple[str, str]]:
        with click.Context(command, info_name=" ".join(path)) as ctx:
            out = [(" ".join(path), command.get_help(ctx))]
        for name, sub in getattr(command, "commands", {}).items():
            out += helps(sub, [*path, name])
        return out

    texts = helps(typer.main.get_command(build()), ["statedir"])
    assert len(texts) > 40
    for where, text in texts:
        assert not re.search(r"\bseeds?\b", text, re.I), where
        assert not re.search(r"\b(update_stage|submit_output|request_update|update_pipeline_state|update_integrity|"
                             r"check_prerequisites|append_observer_report)\b", text), where

"""What a person reads, as text: the renderings the command line prints of the API's documents
(the moves, a template's description, a diff, the dashboard, YAML, a progress bar, the
template-flow notes). Each loads its view when called: a command loads only its own."""
# Lazy imports: agents, engine.template.catalog, engine.template.flow, files.yaml, history.diff, views.dashboard,
#   views.moves_text, views.progress: each method imports what its own call uses, so a call pays for its own path only
#   (every command imports statedir.api: docs/cli-startup.md).
from __future__ import annotations

from pathlib import Path
from typing import Any


def moves(result: dict[str, Any]) -> str:
    """`next`'s document as lines."""
    from statedir.views import moves_text

    return moves_text.render(result)


def template(info: dict[str, Any]) -> str:
    """A template's description (`templates NAME`) as lines."""
    from statedir.engine.template import catalog as template_catalog

    return template_catalog.render(info)


def changes(found: list[dict[str, Any]]) -> str:
    """`diff`'s changes as lines."""
    from statedir.history import diff as diff_mod

    return diff_mod.render(found)


def yaml(doc: Any) -> str:
    """A document as YAML, as the store writes it."""
    from statedir.files import yaml as yaml_mod

    return yaml_mod.dump(doc)


def dashboard(t: Any, run: Any) -> tuple[str, str]:
    """The Progress Dashboard of a run and its one-line form."""
    from statedir.views import dashboard as dashboard_mod

    return dashboard_mod.render(t, run), dashboard_mod.line(t, run)


def progress_bar(label: str, stream: Any) -> Any:
    """A progress bar on `stream` where a person watches (None: nobody does): called with
    (done, total), closed with `.close()`."""
    from statedir.views.progress import Bar

    return Bar(label, stream) if Bar.wanted() else None


def flow_notes(files: list[tuple[Path, str]]) -> list[str]:
    """For each valid template among `files` (path, name shown), how much of its flow the check
    explored: a line for people (`validate -v`)."""
    from statedir.engine.template import flow as template_flow

    return template_flow.notes(files)


def agents_guide() -> str:
    """The agents guide: which command when, exit and error codes, reading a refusal."""
    from statedir import agents

    return agents.guide()


def agents_skill() -> str:
    """The SKILL.md for agent hosts with skills."""
    from statedir import agents

    return agents.skill()


def write_instructions(path: Path, text: str, *, whole: bool = False) -> dict[str, Any]:
    """`text` written into `path` between statedir's markers (a second write replaces the block),
    or as the whole file: {action, file}."""
    from statedir import agents

    return agents.write(path, text, whole=whole)

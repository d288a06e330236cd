"""What an agent reads before it acts, as data: the templates a store can run (statedir's shipped
ones and the store's own) by name, each one's description (stages, statuses and their moves,
checkpoints, actors) and rules as text, and statedir's JSON Schemas as their files hold them. The
MCP server serves these as resources (statedir.mcp.resources)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statedir.bus.fields import SCHEMA_URI as BUS_SCHEMA_URI  # a bus session's shape, by the URI it names
from statedir.engine import template
from statedir.engine.template import Template
from statedir.engine.template import catalog as template_catalog
from statedir.files import schema

__all__ = ["BUS_SCHEMA_URI", "described", "names", "named", "rules", "schema_text"]


def names(templates_dir: Path | None) -> list[str]:
    """The templates' names, shipped then the store's own in `templates_dir`: by file name, none of
    them parsed (a broken one is named too, and reading it says what is wrong); a file named with
    an `@` is a version kept for old runs, not a template of its own."""
    held = sorted(templates_dir.glob("*.yaml")) if templates_dir is not None and templates_dir.is_dir() else []
    return list(dict.fromkeys([*template.shipped(), *(p.stem for p in held if "@" not in p.stem)]))


def named(name: str, templates_dir: Path | None) -> Template:
    """The template `name` (a name only: no file is read by path)."""
    return template.load(name, templates_dir, allow_path=False)


def described(t: Template) -> dict[str, Any]:
    """A template's own vocabulary: its stages, statuses and their moves, materials, checkpoint responses."""
    return template_catalog.describe(t)


def rules(name: str, templates_dir: Path | None) -> str:
    """Template `name`'s rules as text (as `statedir templates NAME` prints them)."""
    return template_catalog.render(described(named(name, templates_dir)))


def schema_text(name: str) -> str:
    """One of statedir's JSON Schemas (schemas/NAME.schema.json), as its file holds it."""
    return schema.schema_path(name).read_text(encoding="utf-8")

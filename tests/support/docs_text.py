"""The documentation as tests read it: the README (a landing page) and the pages of docs/ it links."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """One page of docs/, by its stem: page("bus") is docs/bus.md."""
    return (DOCS / f"{name}.md").read_text()


def section(text: str, heading: str) -> str:
    """From `heading` (a whole `## ...` line) to the next second-level heading."""
    return text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]


def documentation() -> str:
    """Everything a user can read: the README and every docs/ page."""
    return "\n".join([README.read_text(), *(p.read_text() for p in sorted(DOCS.glob("*.md")))])


def readme_example() -> str:
    """docs/bus.md's worked orchestrator/worker example, verbatim."""
    section = page("bus")
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return next(b for b in blocks if "STATE_FILE=$(statedir bus init" in b)

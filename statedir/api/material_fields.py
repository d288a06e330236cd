"""The fields a material's file holds, read once when it is registered: what the template's
material schemas are checked against at each transition (the file itself may change later;
its passport keeps what it held, bound by its content_hash).

A file's fields are the top-level keys of a YAML or JSON mapping (a `.yaml`, `.yml` or `.json`
file, or a Markdown file's front matter between `---` lines) and the names of its Markdown
headings, each written as a key: lower case, every run of other characters one `_`
("## Research Question" -> research_question).
"""
from __future__ import annotations

import json
import re

from statedir.errors import BadFile
from statedir.files import yaml

READ_BYTES = 1 << 20  # the first MiB holds the front matter and enough headings; a file may be any size
MOST_FIELDS = 200
LONGEST = 100
HEADING_RE = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
FRONT_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|\Z)", re.S)


def key(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")[:LONGEST]


def fields(path: str, opened: object) -> list[str]:
    """The fields of the file `opened` (a binary file object at its start), in the order found."""
    raw = opened.read(READ_BYTES)  # type: ignore[attr-defined]
    text = raw.decode("utf-8", errors="replace")
    found: list[str] = []
    front = FRONT_RE.match(text)
    if path.endswith((".yaml", ".yml", ".json")) and len(raw) < READ_BYTES:
        found += _mapping_keys(text, path)
    elif front:
        found += _mapping_keys(front[1], path)
    found += [key(m) for m in HEADING_RE.findall(text[front.end():] if front else text)]
    return list(dict.fromkeys(f for f in found if f))[:MOST_FIELDS]


def _mapping_keys(text: str, path: str) -> list[str]:
    try:
        data = json.loads(text) if path.endswith(".json") else yaml.to_plain(yaml.load(text, path, quote=False))
    except (ValueError, BadFile):
        return []  # not a mapping statedir can read: its headings alone say what it holds
    return [key(str(k)) for k in data] if isinstance(data, dict) else []

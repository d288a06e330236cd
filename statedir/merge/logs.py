"""Append-only logs (schema `log-*`) merged as the union of their entries by identity, each
once, in time order: the same result whatever the order of merges. Each entry keeps the exact
text it was written with where the file splits cleanly into entries."""
from __future__ import annotations

import re
from typing import Any

from statedir.files import yaml, yaml_fast_reader
from statedir.merge.rules import identity, union

_ENTRY = re.compile(r"^ *- ", re.M)


def entries(raw: bytes | None, rel: str) -> tuple[str | None, list[Any], dict[str, str]]:
    """(header line, entries as plain data, identity -> the entry's own text) of a log file."""
    if not raw:
        return None, [], {}
    text = raw.decode("utf-8")
    head = text.partition("\n")[0] + "\n" if text.startswith(yaml.HEADER_PREFIX) else None
    data = yaml_fast_reader.read_own(raw, head[len(yaml.HEADER_PREFIX):-1]) if head else yaml_fast_reader.FOREIGN
    if data is yaml_fast_reader.FOREIGN:
        data = yaml.to_plain(yaml.load(raw, rel))
    items = data if isinstance(data, list) else []
    body = text[len(head):] if head else text
    starts = [m.start() for m in _ENTRY.finditer(body)]
    texts: dict[str, str] = {}
    if starts and len(starts) == len(items) and starts[0] == 0:
        ends = [*starts[1:], len(body)]
        texts = {identity(item): body[a:b] for item, a, b in zip(items, starts, ends, strict=True)}
    return head, items, texts


def merge(rel: str, base: bytes | None, ours: bytes | None, theirs: bytes | None) -> bytes:
    """The union of both sides' entries (the base's are in both sides of an append-only log;
    one that vanished from a side is kept, never lost)."""
    head_o, ours_items, texts = entries(ours, rel)
    head_t, theirs_items, texts_t = entries(theirs, rel)
    appended = base is not None and (ours or b"").startswith(base) and (theirs or b"").startswith(base)
    # Both sides only appended (the usual case): the base's entries are in both already.
    _, base_items, texts_b = (None, [], {}) if appended else entries(base, rel)
    for more in (texts_t, texts_b):  # one entry written in two texts (key order): the same pick always
        for key, text in more.items():
            texts[key] = min(texts.get(key, text), text)
    merged = union(union(base_items, ours_items), theirs_items)
    keys = [identity(entry) for entry in merged]
    if all(key in texts for key in keys):
        body = "".join(texts[key] for key in keys)
    else:  # some side was not split into entries: every entry written afresh, one indentation
        body = yaml.dump(merged) if merged else ""
    return ((head_o or head_t or "") + body).encode("utf-8")

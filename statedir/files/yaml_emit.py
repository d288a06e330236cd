"""The block YAML statedir writes from plain data, without ruamel: block style, stable key
order, scalars quoted only where YAML would read them otherwise (the tests check ruamel reads
back exactly what was written). What it does not take (floats, round-trip documents) raises
NotPlain, and `yaml.dump` leaves that to ruamel's dumper.
"""
from __future__ import annotations

import re
from typing import Any


class NotPlain(Exception):
    """Data the emitter leaves to ruamel (floats, round-trip documents)."""


_PLAIN_SAFE = re.compile(r"[A-Za-z_/][A-Za-z0-9_./()@+-]*(?: [A-Za-z0-9_./()@+-]+)*\Z")
_AMBIGUOUS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"})
# Characters only double quotes carry: C0 and C1 controls, DEL, and five past U+00FF kept apart (a
# character class reaching past U+00FF takes the regex compiler ~0.5 ms, on every command).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
_WIDE = frozenset("\u2028\u2029\ufeff\ufffe\uffff")


def _needs_double(text: str) -> bool:
    return _CONTROLS.search(text) is not None or (not text.isascii() and not _WIDE.isdisjoint(text))
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0"}


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is not str:
        raise NotPlain(type(value).__name__)
    if _PLAIN_SAFE.match(value) and value.lower() not in _AMBIGUOUS:
        return value
    if not _needs_double(value):
        return "'" + value.replace("'", "''") + "'"
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif _needs_double(char):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)


def _mapping(data: dict[str, Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for key, value in data.items():
        if type(key) is not str:
            raise NotPlain("key")
        if isinstance(value, dict) and value:
            out.append(f"{pad}{_scalar(key)}:")
            _mapping(value, indent + 2, out)
        elif isinstance(value, list) and value:
            out.append(f"{pad}{_scalar(key)}:")
            _sequence(value, indent + 2, out)
        else:
            out.append(f"{pad}{_scalar(key)}: {_inline(value)}")


def _sequence(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for value in items:
        if isinstance(value, (dict, list)) and value:
            inner: list[str] = []
            if isinstance(value, dict):
                _mapping(value, indent + 2, inner)
            else:
                _sequence(value, indent + 2, inner)
            out.append(f"{pad}- {inner[0][indent + 2:]}")
            out.extend(inner[1:])
        else:
            out.append(f"{pad}- {_inline(value)}")


def emit(data: Any) -> str:
    """Plain data as block YAML; raises NotPlain for what only ruamel should write."""
    if type(data) not in (dict, list):
        raise NotPlain(type(data).__name__)
    out: list[str] = []
    if isinstance(data, dict):
        if not data:
            return "{}\n"
        _mapping(data, 0, out)
    else:
        if not data:
            return "[]\n"
        _sequence(data, 2, out)
    return "\n".join(out) + "\n"

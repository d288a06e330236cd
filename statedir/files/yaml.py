"""The only module that imports ruamel.yaml: guarded loading, stable dumping, log entries.

Files statedir writes from plain data go through a small emitter of its own
(`statedir.files.yaml_emit`), and statedir's own output is read back without ruamel
(`statedir.files.yaml_fast_reader.read_own`), so a transition whose files come from the parse cache never
imports ruamel. Documents that carry a user's comments are merged and dumped by ruamel's
round-trip dumper.
"""
# Lazy imports: ruamel.yaml (the full parser and emitter, where the fast reader cannot read a file or a comment must
#   be kept) and datetime (a timestamp scalar): ruamel alone costs more than a transition's own work; a transition and
#   `status --line` load neither (tests/test_architecture.py).
from __future__ import annotations

import functools
import io
import re
from typing import TYPE_CHECKING, Any

from statedir.errors import BadFile, InvalidValue, UnresolvedMerge
from statedir.files.yaml_emit import NotPlain, emit

if TYPE_CHECKING:
    from ruamel.yaml import YAML

HEADER_PREFIX = "# yaml-language-server: $schema="
MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)


# Patterns below are compiled on first use (re caches them): a command that never meets the case pays nothing.
_UNSAFE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]"


def _represent_str(representer: Any, value: str) -> Any:
    # Characters YAML folds or drops in plain and single-quoted scalars round-trip only
    # when escaped, so such strings are written double-quoted.
    style = '"' if re.search(_UNSAFE, value) else None
    return representer.represent_scalar("tag:yaml.org,2002:str", value, style=style)


@functools.cache
def _dumper() -> YAML:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(str, _represent_str)
    yaml.representer.add_representer(
        type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    return yaml


def header(schema_ref: str) -> str:
    return f"{HEADER_PREFIX}{schema_ref}\n"


def _check_nodes(node: Any, name: str, quote: bool = True) -> None:
    """Refuse aliases, explicit non-core tags and deep nesting before anything is built."""
    seen: set[int] = set()
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        line = current.start_mark.line + 1
        if id(current) in seen:
            raise BadFile(f"{name}:{line}: aliases are not allowed in statedir files", file=name, line=line)
        seen.add(id(current))
        tag = str(getattr(current.tag, "value", current.tag))
        if tag not in _PLAIN_TAGS:
            what = f"tag {tag!r}" if quote else "a tag"
            raise BadFile(f"{name}:{line}: {what} is not allowed", file=name, line=line)
        if depth > MAX_DEPTH:
            raise BadFile(f"{name}:{line}: nesting deeper than {MAX_DEPTH} levels", file=name, line=line)
        if isinstance(current.value, list):
            for item in current.value:
                if isinstance(item, tuple):
                    key, value = item
                    if isinstance(key.value, list):
                        raise BadFile(f"{name}:{line}: a mapping key must be a plain value",
                                      file=name, line=line)
                    stack.extend(((key, depth + 1), (value, depth + 1)))
                else:
                    stack.append((item, depth + 1))


def check_depth(data: Any, name: str) -> None:
    """Refuse data nested deeper than any reader accepts, before it is written."""
    stack = [(data, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children = list(current.values())
        elif isinstance(current, list):
            children = current
        else:
            continue
        if children and depth + 1 > MAX_DEPTH:
            raise InvalidValue(f"{name}: a value nested deeper than {MAX_DEPTH} levels cannot be read back", file=name)
        stack.extend((child, depth + 1) for child in children)


_QUOTED_OR_COMMENT = r"(?m)'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|(?:^|(?<=\s))#[^\n]*"
_BRACKET = r"[\[\]{}]"


def _flow_depth_ok(text: str) -> bool:
    """ruamel's scanner is quadratic in flow nesting; refuse deep brackets before it runs."""
    if "[" * 8 not in text.replace(" ", "") and text.count("[") + text.count("{") <= MAX_DEPTH:
        return True
    depth = 0
    for match in re.finditer(_BRACKET, re.sub(_QUOTED_OR_COMMENT, "", text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            return False
    return True


_CONFLICT = r"(?m)^<{7} .*$(?s:.*?)^>{7}(?: |$)"


def _check_unresolved(text: str, name: str) -> None:
    """A file git left with conflict markers is an unresolved merge, not a YAML syntax error."""
    match = re.search(_CONFLICT, text)
    if match:
        line = text.count("\n", 0, match.start()) + 1
        raise UnresolvedMerge(f"unresolved merge of {name} (git's conflict markers from line {line}): keep the "
                              "side you want (or a legal mix of both), remove the <<<<<<< ======= >>>>>>> lines, "
                              "then `git add` it and commit; or `git merge --abort` to undo the merge",
                              file=name, line=line)


def load(raw: bytes | str, name: str = "<input>", *, quote: bool = True) -> Any:
    """Parse one YAML document (round-trip types) or raise BadFile naming the line. With
    quote=False (a file from outside the store: any file the caller could name) the message
    names the line only, never the text parsed there."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_BYTES:
            raise BadFile(f"{name}: file is larger than {MAX_BYTES} bytes", file=name)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadFile(f"{name}: not valid UTF-8 (byte {exc.start})", file=name) from None
    else:
        text = raw
        if len(text) > MAX_BYTES:
            raise BadFile(f"{name}: file is larger than {MAX_BYTES} bytes", file=name)
    if "<<<<<<< " in text:
        _check_unresolved(text, name)
    if text.startswith(HEADER_PREFIX):
        # Keep line numbers while leaving the header out of the round-trip comments.
        text = "\n" + text.partition("\n")[2]
    if not _flow_depth_ok(text):
        raise BadFile(f"{name}: nesting deeper than {MAX_DEPTH} levels", file=name)
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    # A fresh loader per document: a failed parse leaves no state behind.
    loader = YAML(typ="rt")
    try:
        constructor, _parser = loader.get_constructor_parser(io.StringIO(text))
        node = constructor.composer.get_single_node()
        if node is None:
            return None
        _check_nodes(node, name, quote)
        return constructor.construct_document(node)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = (exc.problem or exc.context or "invalid YAML").strip() if quote else "not valid YAML"
        raise BadFile(f"{name}:{line}: {problem}", file=name, line=line) from None
    except YAMLError as exc:
        raise BadFile(f"{name}: {' '.join(str(exc).split()) if quote else 'not valid YAML'}", file=name) from None
    except RecursionError:
        raise BadFile(f"{name}: nesting too deep", file=name) from None


def to_plain(data: Any) -> Any:
    """The JSON-like view used for validation and rules: dicts, lists, scalars, strings for times."""
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [to_plain(v) for v in data]
    if isinstance(data, bool) or data is None:
        return data
    if isinstance(data, str):
        return str(data)
    if isinstance(data, int):
        return int(data)
    if isinstance(data, float):
        return float(data)
    import datetime  # ruamel's timestamps (statedir's own reader makes strings): datetime only where they can be

    if isinstance(data, (datetime.datetime, datetime.date)):
        return data.isoformat().replace("+00:00", "Z")
    return str(data)


def dump(data: Any, schema_ref: str | None = None) -> str:
    """Serialize with stable formatting; the schema header line comes first."""
    head = header(schema_ref) if schema_ref else ""
    if data is None:
        return head
    try:
        return head + emit(data)
    except NotPlain:
        stream = io.StringIO()
        _dumper().dump(data, stream)
        return head + stream.getvalue()


def dump_entry(entry: Any) -> str:
    """The text that appending `entry` to a top-level YAML list adds at its end."""
    return dump([entry])


def merge(old: Any, new: Any) -> Any:
    """`new` (plain data) laid over round-trip `old`: comments and key order survive."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [k for k in old if k not in new]:
            del old[key]
        for key, value in new.items():
            old[key] = merge(old[key], value) if key in old else value
        return old
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, value in enumerate(new):
            old[i] = merge(old[i], value)
        return old
    return old if to_plain(old) == new and type(to_plain(old)) is type(new) else new

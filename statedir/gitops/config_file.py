"""The repository's git config read from its config file, where that file is certainly what
`git config --get KEY` answers: no git process. Anything the file cannot answer for certain
(an include, a per-worktree config, config given through the environment, quotes, escapes,
comments after a value, a header or line written another way) is ASK: the caller asks git.

A key the file sets outranks the user's and the system's files; a key it does not set may be
set there, so for git's own keys absence is ASK too. statedir's own keys (`statedir.*`,
`branch.*.statedirVerified`) are written only to the repository's file (`git config` without
--global), so there their absence is an answer: not set.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from statedir.gitops import git
from statedir.gitops.git_options import CONFIG_ENVIRONMENT as _ENVIRONMENT  # config that outranks the file

ASK = object()  # the file cannot answer: ask git
_HEADER = re.compile(r'\[([A-Za-z0-9-]+)(?: "([^"\n]*)")?\]')
_LINE = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*(?:=(.*))?")


def _key(name: str) -> str:
    """A key as git compares it: section and name without case, a subsection as written."""
    section, _, rest = name.partition(".")
    middle, _, last = rest.rpartition(".")
    return f"{section.lower()}.{middle}.{last.lower()}" if middle else f"{section.lower()}.{last.lower()}"


def _value(raw: str) -> str | object:
    """The value `git config --get` prints of a plain one (each blank inside one space, none at
    either end), else ASK."""
    if any(c in '"#;\\' or not (c.isprintable() or c == "\t") for c in raw):
        return ASK
    return raw.strip(" \t").replace("\t", " ")


def parse(text: str) -> dict[str, str | object] | None:
    """key -> its value (or ASK where that is not plain, or set more than once) of a config file's
    text; None where the file as a whole is not plain enough to be read without git."""
    if any(os.environ.get(name) for name in _ENVIRONMENT):
        return None
    if "\\" in text or "\r" in text or "worktreeconfig" in text.lower():
        return None
    values: dict[str, str | object] = {}
    section: str | None = None
    for line in text.split("\n"):
        stripped = line.strip(" \t")
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("["):
            header = _HEADER.fullmatch(stripped)
            if header is None or header.group(1).lower() in ("include", "includeif"):
                return None  # another spelling (`[branch.main]`), a key on the header's line, an include
            name, sub = header.group(1).lower(), header.group(2)
            section = name if sub is None else f"{name}.{sub}"
            continue
        entry = _LINE.fullmatch(stripped)
        if entry is None or section is None:
            return None
        raw, key = entry.group(2), f"{section}.{entry.group(1).lower()}"
        # a bare key is a boolean; a key set twice is a list (a remote's URLs), which callers read apart
        values[key] = ASK if raw is None or key in values else _value(raw)
    return values


def read(worktree: Path) -> dict[str, str | object] | None:
    """parse() of the repository's config file (a linked work tree's is its repository's); None
    where it cannot be read."""
    try:
        text = (git.common_dir(git.git_dir(worktree)) / "config").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return parse(text)


def get(values: dict[str, str | object] | None, name: str, *, own: bool = False) -> str | None | object:
    """KEY's value, None where it is not set, ASK where git must say; `own`: one of statedir's
    keys, whose absence from the repository's file is an answer."""
    if values is None:
        return ASK
    found = values.get(_key(name), None if own else ASK)
    return found


def value(worktree: Path, name: str, *, own: bool = False,
          values: dict[str, str | object] | None | object = ASK) -> str | None:
    """KEY as `git config --get` prints it (None: not set), from the file where certain, else
    from git. `values`: a read() already made."""
    found = get(read(worktree) if values is ASK else values, name, own=own)  # type: ignore[arg-type]
    if found is not ASK:
        return found or None  # type: ignore[return-value]
    proc = git.run(worktree, "config", "--get", name, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

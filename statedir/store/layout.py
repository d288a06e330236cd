"""The store's layout: its fixed files, how runs are named, which schema checks which file and
the `$schema` reference on a file's first line (a new store's copies in `.schemas/` are
`statedir.store.skeleton`'s)."""
from __future__ import annotations

import re

from statedir.errors import InvalidId

CONFIG = "statedir.yaml"
LOCK = ".statedir.lock"
JOURNAL = ".statedir.txn"  # a transition's journal while it writes (statedir.store.journal)
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
GITIGNORE = f"{LOCK}\n{JOURNAL}\n*.tmp\n"
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"  # a store on a branch of its own: the hooks of its work tree
GITATTRIBUTES = (  # the merge driver is registered in the repository's config by statedir.gitops.merge_driver_config
    "# statedir: YAML state, diffed as text, merged by `statedir merge-driver`: each field by its\n"
    "# schema's x-merge rule, append-only logs as the union of their entries (see README, sync)\n"
    "*.yaml text eol=lf merge=statedir\n"
)

# A log's day segment: `<day>.yaml`, then `<day>.2.yaml`, ... where a day's file would grow past
# what readers accept (statedir.store.run_logs decides, and reads them in that order).
DAY_SEGMENT = r"(?P<day>\d{4}-\d{2}-\d{2})(?:\.(?P<part>[2-9]|[1-9]\d+))?\.yaml"

# Which schema checks which store file (store-relative posix path patterns).
SCHEMA_OF = (
    (re.compile(r"^statedir\.yaml$"), "store-config"),
    (re.compile(r"^signers\.yaml$"), "signers"),
    (re.compile(r"^acknowledged\.yaml$"), "log-acknowledged"),  # verify findings a person accepted
    (re.compile(r"^templates/[^/]+\.yaml$"), "template"),
    (re.compile(r"^runs/[^/]+/state\.yaml$"), "run-state"),
    (re.compile(r"^runs/[^/]+/stages/[^/]+\.yaml$"), "stage"),
    (re.compile(r"^runs/[^/]+/materials/[^/]+\.yaml$"), "passport"),
    (re.compile(rf"^runs/[^/]+/history/(?P<log>[^/]+)/{DAY_SEGMENT}$"), "log-{log}"),  # a day segment
    (re.compile(r"^runs/[^/]+/history/(?P<log>[^/]+)\.yaml$"), "log-{log}"),  # a log of the layout before segments
    (re.compile(r"^bus/[^/]+\.yaml$"), "bus-session"),
    (re.compile(r"^research/(?P<kind>projects|questions|hypotheses|experiments|runs|sources|evidence|results|claims)"
                r"/[^/]+\.yaml$"), "research-{kind}"),
)


def unwritten(rel: str, mode: str = "100644") -> str | None:
    """Why statedir never writes the store file `rel` with git mode `mode`, or None where it may:
    its own files at the store's top, schema copies in `.schemas/`, and YAML files where a
    schema of the store covers their path."""
    name = rel.rpartition("/")[2]
    if mode.startswith("120"):
        return "a symbolic link"
    if mode.startswith("160"):
        return "a submodule"
    if rel in (CONFIG, ".gitignore", ".gitattributes", PRE_COMMIT_CONFIG):
        return None
    if name.startswith(".git"):
        return f"a {name} file inside the store (git would take it to change how the store's files are merged, " \
               "diffed, filtered or ignored)"
    if rel.startswith(".schemas/"):
        return None if rel.endswith(".schema.json") else "not a schema copy in .schemas/"
    if not rel.endswith(".yaml"):
        return "not a YAML file"
    return None if schema_for(rel) else "a YAML file where no schema of the store says what it holds"


def check_run_id(run_id: str) -> str:
    if not RUN_ID_RE.fullmatch(run_id) or run_id in {".", ".."}:
        raise InvalidId(f"invalid run id {run_id!r}: use letters, digits and ._:- (at most 128, "
                        "starting with a letter or digit)", run_id=run_id)
    return run_id


def schema_for(rel: str) -> str | None:
    """The schema name for a store-relative path, or None for files statedir does not own."""
    for pattern, name in SCHEMA_OF:
        match = pattern.match(rel)
        if match:
            return name.format(**match.groupdict())
    return None


def schema_ref(rel: str, scope: str | None = None) -> str:
    """The relative path from a store file to its schema copy in `.schemas/` (for a run file
    under `scope`, `<template>/<version>`, the template's compiled schema)."""
    name = schema_for(rel)
    depth = rel.count("/")
    return "../" * depth + (f".schemas/{scope}/" if scope else ".schemas/") + f"{name}.schema.json"


SCOPED_REF_RE = re.compile(r"^(?:\.\./)*\.schemas/"
                           r"(?:[A-Za-z0-9][A-Za-z0-9_.'-]{0,63}/[A-Za-z0-9][A-Za-z0-9._-]{0,31}/)?"
                           r"[a-z_-]+\.schema\.json$")


def own_ref(rel: str, raw: bytes | None) -> str:
    """The schema reference on the first line of `raw` when it is one statedir writes for `rel`
    (generic or its template's compiled schema), else the generic one."""
    generic = schema_ref(rel)
    if raw is None or not raw.startswith(b"# yaml-language-server: $schema="):
        return generic
    line = raw[32:raw.find(b"\n")].decode("utf-8", "replace")
    prefix, name = "../" * rel.count("/") + ".schemas/", f"/{schema_for(rel)}.schema.json"
    if line.startswith(prefix) and line.endswith(name) and SCOPED_REF_RE.match(line) and line.count("/") == \
            generic.count("/") + 2:
        return line
    return generic

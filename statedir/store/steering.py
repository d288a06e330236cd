"""Store files that steer the programs run in the store's work tree rather than hold state: git's
own files (`.gitattributes` picks merge drivers and filters, `.gitignore`, `.gitmodules`), and the
configuration of hook managers and CI (`.pre-commit-config.yaml` runs commands). A remote that
changes one could make another machine's git or hooks do what it likes, so verify holds each
change to them `illegal`, except the texts statedir's own `init` writes (every text it has ever
written, so older stores still verify), which its replay checks byte for byte.
"""
from __future__ import annotations

from statedir.store import layout

# Read by hook managers and CI runners from the work tree they run in: each names commands to run.
HOOK_CONFIGS = frozenset({".pre-commit-config.yaml", ".pre-commit-config.yml", ".pre-commit-hooks.yaml",
                          "lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook-local.yml",
                          ".overcommit.yml", ".husky", ".envrc", ".travis.yml", ".circleci", "azure-pipelines.yml",
                          "Jenkinsfile", ".buildkite", ".drone.yml", ".woodpecker.yml", ".woodpecker"})

# The config a store on a branch of its own carried at its root from `init --branch` until statedir
# installed the store's hooks itself (statedir.gitops.hooks): inert now, since no hook reads it.
LEGACY_PRE_COMMIT_CONFIG = """\
# statedir: the hooks of the store's work tree (statedir init --branch); see docs/branch.md.
# Installed with `pre-commit install` (and `--hook-type pre-push`) in your work tree, they run here too.
repos:
  - repo: local
    hooks:
      - id: statedir-validate
        name: statedir validate
        entry: statedir validate --skip-outside-stores
        language: system
        files: '(^|/)(statedir\\.yaml|templates/[^/]+\\.ya?ml|runs/[^/]+/(state|stages/[^/]+|materials/[^/]+|\
history/[^/]+(/[0-9]{4}-[0-9]{2}-[0-9]{2})?)\\.yaml|bus/[0-9]{4}-[0-9]{2}-[0-9]{2}-[^/]+\\.yaml|\
research/[^/]+/[^/]+\\.yaml)$'
        types: [yaml]
      - id: statedir-verify
        name: statedir verify
        entry: statedir verify --pushed
        language: system
        pass_filenames: false
        always_run: true
        stages: [pre-push]
"""

# Every text statedir's init has written to each of these files at a store's top.
INIT_TEXTS: dict[str, frozenset[bytes]] = {
    ".gitignore": frozenset({layout.GITIGNORE.encode()}),
    ".gitattributes": frozenset({layout.GITATTRIBUTES.encode(), (  # before the merge driver
        "# statedir: YAML state, diffed as text; logs are append-only so a union merge keeps both sides\n"
        "*.yaml text eol=lf\n"
        "runs/*/history/*.yaml merge=union\n").encode()}),
    layout.PRE_COMMIT_CONFIG: frozenset({LEGACY_PRE_COMMIT_CONFIG.encode()}),
}


def steers(rel: str) -> str | None:
    """What the store file `rel` would steer (git, or a hook manager's commands), or None where it
    holds only data."""
    for part in rel.split("/"):
        if part.startswith(".git"):
            return f"git (or a CI runner) takes {part} to change how the store's files are merged, diffed, " \
                   "filtered or ignored, or what runs"
        if part in HOOK_CONFIGS:
            return f"{part} names commands a hook manager or CI runner runs in the work tree holding it"
    return None


def init_wrote(rel: str, text: bytes) -> bool:
    """Whether `text` is what statedir's init writes (or once wrote) at `rel`."""
    return text in INIT_TEXTS.get(rel, frozenset())

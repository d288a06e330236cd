"""What each tool is to a client: its group (`statedir mcp --tools`), its title, and the four
hints (read-only, destructive, idempotent, open-world), each chosen for the command. No MCP SDK here.

A tool's group is found from the first word of its command, so a command added to the CLI
lands in one group with no further code; its title and hints are the table's, else the
careful defaults (a write is destructive and not idempotent until said otherwise).
"""
from __future__ import annotations

from dataclasses import dataclass

from statedir.errors import InvalidValue

GROUPS = ("pipeline", "history", "bus", "research", "signing", "sync")
# The first word of a command -> its group; every other command drives runs (pipeline).
_GROUP_OF = {"bus": "bus", "research": "research", "signers": "signing", "sync": "sync",
             "log": "history", "diff": "history", "verify": "history", "doctor": "history",
             "rollback": "history", "validate": "history"}

# Commands that only read. Every other command is annotated as one that may write; a write's
# --expect is its `expect_head`; a command with --actor is a transition and never read-only, and
# every command that is not read-only takes --expect (tests check both).
READ_ONLY = frozenset({"runs", "templates", "show", "get", "status", "next", "prereq", "log", "validate", "graph",
                       "diff", "versions", "verify", "bus_get", "signers_list"})
# Writes that may take away or replace what is there (not only add to it): ending a run for
# good, going back in it, replacing a value, removing a session, a key or the files doctor repairs.
DESTRUCTIVE = frozenset({"pipeline", "rollback", "redo", "set", "bus_set", "bus_init", "bus_clear",
                         "signers_remove", "signers_acknowledgers", "doctor", "bind", "resume",
                         # a research record's status or grade replaced (the ledger served one tool per action)
                         "research", "research_complete_run", "research_answer_question",
                         "research_abandon_question", "research_set_hypothesis_status",
                         "research_set_experiment_status", "research_set_source_screening",
                         "research_set_source_evidence_tier"})
# Writes whose repeat with the same arguments changes nothing more: the rules refuse the second
# (or call it a no-op), and the store is as the first left it. Reads are all idempotent.
IDEMPOTENT = frozenset({"init", "new", "stage", "set", "pipeline", "bus_set", "bus_init", "bus_clear", "signers_add",
                        "signers_remove", "signers_acknowledgers", "doctor", "seal", "sync",
                        "research_set_hypothesis_status", "research_set_experiment_status",
                        "research_set_source_screening", "research_set_source_evidence_tier"})
# The only tool that reaches past the repository: it fetches from and pushes to a git remote.
OPEN_WORLD = frozenset({"sync"})

TITLES = {
    "bind": "Bind an artifact to an adjudication row", "bus_append": "Append to a list on the bus",
    "bus_clear": "Remove a bus session", "bus_get": "Read a bus session or field",
    "bus_init": "Start a bus session", "bus_set": "Set a bus field",
    "confirm": "Answer the open checkpoint", "diff": "Changes in a run between commits",
    "doctor": "Find (and repair) leftovers", "init": "Make the store", "get": "Read one value of a run",
    "graph": "Draw the stage graph",
    "integrity": "Record an integrity check", "log": "Read the audit trail", "loop": "Count a revision loop",
    "material": "Register a material version", "new": "Create a run", "next": "The legal moves now",
    "observe": "Append an observer report", "output": "Record stage outputs",
    "pipeline": "Pause, resume, abort or complete a run", "prereq": "Check a stage's prerequisites",
    "redo": "Reopen a completed stage", "research": "Research ledger", "resume": "Resume from a reset boundary",
    "resolve": "Record the user's FAIL-loop resolution",
    "revision": "Record a revision round", "rollback": "Bring a run back to a commit", "runs": "List runs",
    "seal": "Seal the bound artifacts", "set": "Change a run field", "show": "The whole run",
    "signers_add": "Bind an actor to a signing key", "signers_list": "List bound signers",
    "signers_remove": "Unbind an actor's keys", "signers_acknowledgers": "Name who acknowledges findings",
    "stage": "Update a stage's status",
    "status": "Progress dashboard", "sync": "Sync with the git remote", "templates": "List or describe templates",
    "validate": "Check store files against their schemas", "verify": "Replay and check history",
    "versions": "Every version of a material",
}


@dataclass(frozen=True)
class Kind:
    """A tool's group, title and hints."""

    group: str
    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


def group_of(path: tuple[str, ...]) -> str:
    """The group a command (its words on the command line) belongs to."""
    return _GROUP_OF.get(path[0], "pipeline")


def kind_of(name: str, path: tuple[str, ...], read_only: bool) -> Kind:
    """Tool `name`'s (its command's words `path`; whether it only reads) group, title and hints."""
    title = TITLES.get(name) or name.replace("_", " ").capitalize()
    return Kind(group_of(path), title, read_only, destructive=not read_only and name in DESTRUCTIVE,
                idempotent=read_only or name in IDEMPOTENT, open_world=name in OPEN_WORLD)


def chosen_groups(text: str) -> tuple[str, ...]:
    """The groups `--tools a,b` names, checked: an unknown one is INVALID_VALUE listing the valid ones."""
    names = tuple(dict.fromkeys(word.strip() for word in text.split(",") if word.strip()))
    unknown = [name for name in names if name not in GROUPS]
    if unknown or not names:
        said = f"unknown tool group {', '.join(map(repr, unknown))}" if unknown else "no tool group named"
        raise InvalidValue(f"--tools: {said}; the groups are {', '.join(GROUPS)}", unknown=unknown,
                           groups=list(GROUPS))
    return names

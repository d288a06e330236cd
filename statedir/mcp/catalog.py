"""What each tool is to a client: its group (`statedir mcp --tools`), its title, and the four
hints (read-only, destructive, idempotent, open-world), each chosen for the command. No MCP SDK here.

A tool's group is declared: by its command (the registry's `tools_group`, see
statedir.cli.registry), else in GROUP_OF below by the command's first word; a command declared
nowhere is `pipeline` where it acts on a run as an actor (a transition an agent may need to drive
it), else `control`. So a command added to the CLI lands in one group with no further code.
"""
from __future__ import annotations

from dataclasses import dataclass

from statedir.errors import InvalidValue

# Every group, and what it is for (the `statedir://tools` resource lists them with their tools).
GROUP_PURPOSES = {
    "pipeline": "The everyday work of driving a run: read where it is and what is legal, then move it.",
    "control": "Steering a run outside the everyday moves: pause/abort/complete, change a field, redo or resume "
               "a stage, outputs and loops recorded alone, prerequisites, templates, the stage graph, a "
               "material's versions.",
    "ars": "Adjudication bindings and seals (bind, seal).",
    "history": "The audit trail: log, diff, verify, validate, doctor, rollback.",
    "bus": "The handoff bus: sessions of fields passed between phases.",
    "research": "The research ledger, one tool per action.",
    "signing": "Signing keys bound to actors.",
    "sync": "Sync with the git remote.",
}
GROUPS = tuple(GROUP_PURPOSES)
DEFAULT = ("pipeline",)  # what `statedir mcp` serves without --tools
ALL = "all"  # --tools all: every group
# The first word of a command -> its group.
GROUP_OF = {"init": "pipeline", "new": "pipeline", "runs": "pipeline", "next": "pipeline", "status": "pipeline",
            "show": "pipeline", "get": "pipeline", "stage": "pipeline", "confirm": "pipeline",
            "material": "pipeline", "integrity": "pipeline", "revision": "pipeline", "observe": "pipeline",
            "contract": "pipeline",  # the re-review contract: every run revised passes stage 3' by it
            "output": "control", "loop": "control", "prereq": "control", "pipeline": "control", "set": "control", "redo": "control", "resume": "control",
            "advisory": "control", "compliance": "control", "inquiry": "control",
            "templates": "control", "graph": "control", "versions": "control",
            "bind": "ars", "seal": "ars",
            "bus": "bus", "research": "research", "signers": "signing", "sync": "sync",
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
    "confirm": "Answer the open checkpoint", "inquiry": "Note a branch of the inquiry ledger", "diff": "Changes in a run between commits",
    "doctor": "Find (and repair) leftovers", "init": "Make the store", "get": "Read one value of a run",
    "graph": "Draw the stage graph",
    "integrity": "Record an integrity check", "log": "Read the audit trail", "loop": "Count a revision loop",
    "material": "Register a material version", "new": "Create a run", "next": "The legal moves now",
    "observe": "Append an observer report", "output": "Record stage outputs",
    "pipeline": "Pause, resume, abort or complete a run", "prereq": "Check a stage's prerequisites",
    "redo": "Reopen a completed stage", "research": "Research ledger", "resume": "Resume from a reset boundary",
    "resolve": "Record the user's FAIL-loop resolution",
    "revision": "Record a revision round", "rollback": "Bring a run back to a commit", "runs": "List runs",
    "seal": "Seal the bound artifacts", "set": "Change a run field", "show": "Read a run",
    "signers_add": "Bind an actor to a signing key", "signers_list": "List bound signers",
    "signers_remove": "Unbind an actor's keys", "signers_acknowledgers": "Name who acknowledges findings",
    "stage": "Update a stage's status",
    "status": "Progress dashboard", "sync": "Sync with the git remote", "templates": "List or describe templates",
    "validate": "Check store files against their schemas", "verify": "Replay and check history",
    "versions": "Every version of a material",
}


# The protocol's defaults for the four hints (a client reads a hint left out as this), and the hints
# it reads only on a tool that writes (readOnlyHint false).
HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": True}
WRITES_ONLY = frozenset({"destructive_hint", "idempotent_hint"})


@dataclass(frozen=True)
class Kind:
    """A tool's group, title and hints."""

    group: str
    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool

    def hints(self) -> dict[str, bool]:
        """The hints a client needs told: each that differs from the protocol's default, and on a
        read-only tool not those the protocol reads only on a write (every agent reads every tool's)."""
        chosen = {"read_only_hint": self.read_only, "destructive_hint": self.destructive,
                  "idempotent_hint": self.idempotent, "open_world_hint": self.open_world}
        return {hint: value for hint, value in chosen.items() if value != HINT_DEFAULTS[hint]
                and not (self.read_only and hint in WRITES_ONLY)}


def group_of(path: tuple[str, ...], declared: str | None = None, acts: bool = False) -> str:
    """The group of a command (its words on the command line; the group it declares; whether it
    takes an actor): as declared, else GROUP_OF's, else `pipeline` for a transition, `control` for the rest."""
    if declared in GROUP_PURPOSES:
        return declared
    return GROUP_OF.get(path[0], "pipeline" if acts else "control")


def kind_of(name: str, path: tuple[str, ...], read_only: bool, declared: str | None = None,
            acts: bool = False) -> Kind:
    """Tool `name`'s (its command's words `path`; whether it only reads; its declared group;
    whether it takes an actor) group, title and hints."""
    title = TITLES.get(name) or name.replace("_", " ").capitalize()
    return Kind(group_of(path, declared, acts), title, read_only, destructive=not read_only and name in DESTRUCTIVE,
                idempotent=read_only or name in IDEMPOTENT, open_world=name in OPEN_WORLD)


def chosen_groups(text: str) -> tuple[str, ...]:
    """The groups `--tools a,b` names (`all`: every group), checked: an unknown one is INVALID_VALUE
    listing the valid ones."""
    names = tuple(dict.fromkeys(word.strip() for word in text.split(",") if word.strip()))
    if ALL in names:
        return GROUPS
    unknown = [name for name in names if name not in GROUPS]
    if unknown or not names:
        said = f"unknown tool group {', '.join(map(repr, unknown))}" if unknown else "no tool group named"
        raise InvalidValue(f"--tools: {said}; the groups are {', '.join(GROUPS)} (or all)", unknown=unknown,
                           groups=list(GROUPS))
    return names

"""The research ledger as one MCP tool per action (research_start_run, research_record_claim, ...),
each taking only its own arguments, its refusals in the common shape {error: {code, message, details}}.
The CLI's `research` keeps the seed's action flags and flat errors; a tool calls its function with
its action's flag set. No MCP SDK here."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statedir.api.vocabularies import (
    ARTIFACT_ROLES,
    CONFIDENCE,
    EXPERIMENT_STATUSES,
    HYPOTHESIS_STATUSES,
    RUN_CLOSING_STATUSES,
    SCREENING,
    STANCES,
)
from statedir.commands.table import Command
from statedir.errors import InvalidValue
from statedir.mcp import research_outputs
from statedir.mcp.tools import EXPECT_HEAD, Tool, tool_of

PREFIX = "research_"
_FLAG = re.compile(r"--([a-z][a-z-]*)")
# Arguments whose CLI help speaks of other flags, as the tools' own argument names say it.
_WORDED = {"actor": "The role the commit is made in (default: the server's role).",
           # resource-resolver's roles offered by name, never enforced: the resolver owns the list (seed 004)
           "artifact_role": "The resource-resolver role the artifact lives under: "
                            f"{', '.join(ARTIFACT_ROLES)} "
                            "(resource-resolver's; it owns the list, so another of its roles is taken too); with "
                            "artifact_path, relative to it.",
           "full": "Reread every research file, not only those changed since the index was built."}


@dataclass(frozen=True)
class Action:
    """One research action as a tool: what it does, the arguments it takes (the required first),
    the allowed values of those that have a vocabulary, and whether it only reads."""

    description: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    enums: tuple[tuple[str, tuple[str, ...]], ...] = ()
    read_only: bool = False


_SKILL = "skill"  # on a create: the record's created_by (default: the ledger's default creator)
ACTIONS: dict[str, Action] = {
    "create-project": Action("Register a research Project.", ("name",), ("description", _SKILL)),
    "create-question": Action("Register a Question (without starting a Run).", ("question",), ("project_id", _SKILL)),
    "start-run": Action("Start a research Run of a skill; at most one of question (new text) or question_id, "
                        "hypothesis_id, experiment_id. The levels below the one named are made as placeholders "
                        "(a Hypothesis, an Experiment): their ids are the result's `created`.", ("skill",),
                        ("mode", "question", "question_id", "hypothesis_id", "experiment_id", "project_id")),
    "complete-run": Action("Close a Run as completed or failed.", ("run_id", "status"),
                           enums=(("status", RUN_CLOSING_STATUSES),)),
    "answer-question": Action("Mark a Question answered.", ("question_id",)),
    "abandon-question": Action("Mark a Question abandoned.", ("question_id",)),
    "record-result": Action("Record an immutable Result of a Run (artifact_role with artifact_path).",
                            ("run_id", "summary"), ("artifact_role", "artifact_path")),
    "record-claim": Action("Record an immutable Claim of a Run, resting on evidence (text) or evidence_id.",
                           ("run_id", "statement"), ("confidence", "evidence", "evidence_id"),
                           enums=(("confidence", CONFIDENCE),)),
    "create-hypothesis": Action("Declare a Hypothesis for a Question.", ("question_id", "statement"), (_SKILL,)),
    "set-hypothesis-status": Action("Set a Hypothesis's status.", ("hypothesis_id", "status"),
                                    enums=(("status", HYPOTHESIS_STATUSES),)),
    "create-experiment": Action("Declare an Experiment testing a Hypothesis.", ("hypothesis_id", "description"),
                                (_SKILL,)),
    "set-experiment-status": Action("Set an Experiment's status.", ("experiment_id", "status"),
                                    enums=(("status", EXPERIMENT_STATUSES),)),
    "create-source": Action("Register a Source; an existing one with the same doi (exact) or url (normalized) "
                            "is returned instead.", ("title",),
                            ("authors", "year", "doi", "url", "venue", "evidence_tier", "project_id", _SKILL)),
    "set-source-screening": Action("Record a Source's screening decision.", ("source_id", "screening_status"),
                                   ("exclusion_reason",), enums=(("screening_status", SCREENING),)),
    "set-source-evidence-tier": Action("Grade a Source's evidence.", ("source_id", "evidence_tier")),
    "create-evidence": Action("Record an Evidence Statement of a Source about a Question.",
                              ("source_id", "question_id", "statement", "stance"),
                              ("hypothesis_id", "limitations", "uncertainty_note", _SKILL),
                              enums=(("stance", STANCES),)),
    "query": Action("A record and its children: give exactly one of run_id, question_id, project_id, "
                    "hypothesis_id, experiment_id, source_id, skill, since.", (),
                    ("run_id", "question_id", "project_id", "hypothesis_id", "experiment_id", "source_id", _SKILL,
                     "since"), read_only=True),
    "validate": Action("List the ledger's dangling references (repairs nothing).", read_only=True),
    "rebuild-index": Action("Bring the ledger's disposable SQLite index up to date (full: reread every file); "
                            "changes no store file.", (), ("full",), read_only=True),
    "report": Action("A plain-text summary of Runs (since: an ISO date or date-time).", (), ("since",),
                     read_only=True),
}


@dataclass(frozen=True)
class ResearchTool(Tool):
    """A research action served as a tool: the CLI's `research` called with the action's flag."""

    @property
    def action(self) -> str:
        return self.path[1].removeprefix("--")

    @property
    def output_schema(self) -> dict[str, Any]:
        return research_outputs.schema_of(self.action)

    def keywords(self, arguments: dict[str, Any], store: Path) -> dict[str, Any]:
        """The function's keyword arguments, the action's flag set and its required arguments
        checked by their names (the CLI's options are all optional: which are needed depends on
        the action flag)."""
        given = super().keywords(arguments, store)
        missing = [name for name in self.input_schema.get("required", [])
                   if not (isinstance(arguments.get(name), str) and arguments[name].strip())]
        if missing:
            more = {"arguments": missing} if len(missing) > 1 else {}
            raise InvalidValue(f"{self.name}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} required",
                               argument=missing[0], **more)
        return {**given, self.action.replace("-", "_"): True}

    def common_shape(self, text: str) -> str:
        """The CLI's flat error {error: CODE, message, details} as the common {error: {code, message, details}}."""
        try:
            doc = json.loads(text)
        except ValueError:
            return text
        if not (isinstance(doc, dict) and isinstance(doc.get("error"), str)):
            return text
        error = {"code": doc["error"], "message": self._worded(str(doc.get("message", ""))),
                 "details": doc.get("details") or {}}
        return json.dumps({"error": error}, ensure_ascii=False, separators=(",", ":"))

    def _worded(self, message: str) -> str:
        """The ledger's message in the tools' words: an action flag is its tool, a value flag its argument."""
        names = {p.name for p in self.command.parameters}

        def word(found: re.Match[str]) -> str:
            flag = found[1]
            if flag in ACTIONS:
                return PREFIX + flag.replace("-", "_")
            return flag.replace("-", "_") if flag.replace("-", "_") in names else found[0]

        return _FLAG.sub(word, message)


def research_tools(command: Command) -> dict[str, Tool]:
    """One tool per research action, by tool name, each schema a slice of the command's."""
    whole = tool_of("research", ("research",), command).input_schema["properties"]
    out: dict[str, Tool] = {}
    for action, spec in ACTIONS.items():
        names = [*spec.required, *spec.optional] + ([] if spec.read_only else ["actor", EXPECT_HEAD])
        properties = {name: dict(whole[name]) for name in names}
        for name in set(properties) & set(_WORDED):
            properties[name]["description"] = _WORDED[name]
        for name, values in spec.enums:
            properties[name]["enum"] = list(values)
            if properties[name].get("description", "").endswith("(per action)."):  # the CLI's every value
                properties[name]["description"] = f"{', '.join(values)}."
        schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if spec.required:
            schema["required"] = list(spec.required)
        name = PREFIX + action.replace("-", "_")
        out[name] = ResearchTool(name, ("research", f"--{action}"), command, spec.description, schema,
                                 read_only=spec.read_only)
    return out

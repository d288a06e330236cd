"""The tools the server offers, as an agent needs them rather than as the CLI spells them: the
research ledger one tool per action, `init`, file arguments relative to the repository root, and
reads paged by default (`log` a page at a time, `show` without the histories unless asked).
Built on statedir.mcp.tools (the command table's commands as tools); no MCP SDK here."""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from statedir.api.places import names_a_file
from statedir.commands.table import Command
from statedir.errors import InvalidValue
from statedir.mcp import lean
from statedir.mcp.research_tools import ResearchTool, research_tools
from statedir.mcp.tools import Tool, tool_of, tools, worded, wording_of

INIT = "init"
# Arguments naming a file or folder: over MCP relative to the repository root (never the server's
# working directory), and refused where they lead out of the repository.
FILE_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "material": ("file",), "observe": ("report",), "seal": ("artifact_root", "bindings"), "bus_init": ("clean",),
    "new": ("passport", "file", "entry_material"), "validate": ("files",), "contract": ("file",),
    "advisory": ("file",), "compliance": ("report",)}
# Arguments taking a path or else a name (a template's, a session's) or a key's text, with the kind
# whose rule (argument_checks.names_a_file, the one their readers use) tells which: a path is read
# as the ones above, whatever it holds.
PATH_OR_NAME: dict[str, dict[str, str]] = {
    "new": {"template": "template"}, "graph": {"template": "template"}, "templates": {"name": "template"},
    "signers_add": {"key": "key"}, "signers_remove": {"key": "key"},
    **{f"bus_{verb}": {"session": "session"} for verb in ("init", "set", "append", "get", "clear")}}
IN_REPOSITORY = "A path relative to the repository root."  # one leading out of it: refused (the instructions say so)
AS_A_PATH = {
    "template": "A name (letters, digits, ._-; no .yaml), else a file's path",
    "key": "Anything but a key's text (ssh-..., ecdsa-..., sk-...) is a .pub file's path",
    "session": "A value holding a '/' is the path of the session's file"}
WHERE_A_PATH_IS = ", relative to the repository root."
# Defaults an agent gets that the CLI's user does not: small reads. (tool, argument) -> (value, description)
MCP_DEFAULTS: dict[tuple[str, str], tuple[Any, str]] = {
    ("show", "history"): (False, "Also the histories (they grow with every transition)."),
    ("log", "limit"): (50, "At most this many entries, the newest first (default 50)."),
    ("log", "cursor"): ("start", "Where the page starts: 'start' (the newest), or the next_cursor of the page "
                                 "before. The result is {entries, next_cursor}; next_cursor null on the last page."),
}

# Arguments described over MCP in fewer words than the command line's help, where those words send
# an agent to a tool the default set lacks (`templates`), repeat the enum, or explain what an agent
# never needs (init's branch): every agent reads each of them, every session.
MCP_WORDS: dict[tuple[str, str], str] = {
    ("stage", "status"): "The stage's new status (`next` lists the legal ones).",
    ("integrity", "stage"): "The integrity stage checked.",
    ("confirm", "response"): "Default continue; a MANDATORY checkpoint needs one. just-continue: later ones SLIM; "
                             "review: FULL again; done: the run ends.",
    ("confirm", "metric"): "FULL checkpoints: word_count=N, references=N, coverage=N/T.",
    ("confirm", "quality"): "Is the output as good as the last? regressed pauses for the user's answer.",
    ("confirm", "format"): "Stage 5 entry: the citation style.",
    ("confirm", "decision"): "The user's decision where 3p left it to them (user_review_required).",
    ("new", "template"): "Default: the store's (academic-pipeline).",
    ("new", "file"): "The file the passport stands for (its SHA-256 is the passport's content_hash).",
    ("new", "entry_material"): "A file the user brings, registered at entry (academic-pipeline at 4: reviewer "
                               "comments, as review_reports).",
    ("integrity", "reason"): "Why (logged; without `resolve` in the template: the user's FAIL-cap decision).",
    ("confirm", "skip_refused"): "After a refused attempt to skip this MANDATORY checkpoint.",
    ("resolve", "decision"): "handle_manually, remove_unverifiable: one more check; continue_unverified: the stage "
                             "completes, partially unverified.",
    ("resolve", "reason"): "Why; the override ladder's 1st may omit it, the 2nd needs one, the 3rd 100+ characters.",
    **{(tool, "at"): "As of this commit (nothing is checked out)." for tool in ("show", "get")},
    **{("bus_" + verb, "field"): "The field; dots reach nested entries: phases.1-design.status, "
       "phases.1-design.outputs.NAME (a contract field), phases.1-design.evidence (a list: bus_append). "
       "A session's shape: the resource statedir://bus/schema." for verb in ("set", "append")},
    ("show", "format"): "ars: the State Tracker's single JSON (always the whole run).",
    ("init", "branch"): "Commit the store to this branch (a linked work tree), never to yours.",
    ("init", "new_store"): "Make a store on your branch even where a remote's branch holds one.",
    ("observe", "report"): "YAML or JSON: advisory_only: true, at most timestamp (UTC ISO 8601), dialogue_log_ref, "
                           "zone, scores, cross_model_divergence (a cross_model run: model_scores {MODEL: {DIM: N}}).",
    ("contract", "stage"): "academic-pipeline: 3p.",
    ("contract", "file"): "The part's file, or the check's report.",
    ("material", "allow_untracked"): "No warning that the artifact is untracked (a clone lacks it).",
    ("stage", "stage"): "A stage id of the run's template (or its alias).",
    ("stage", "output"): "An output, e.g. a material the stage produced.",
    ("stage", "decision"): "Where the stage's template declares decisions.",
    ("stage", "reason"): "Why (logged).",
    ("checklist", "stage"): "The integrity stage.",
    ("resolve", "stage"): "The integrity stage out of FAIL rounds.",
    ("acknowledge", "reason"): "Why (an override needs one, as long as the ladder asks).",
    ("contract", "exit_code"): "The check's: 0 pass, 1 synthesis mismatch, 2 manifest invalid.",
    ("new", "confirm_skip"): "The user confirms skipping integrity on that passport.",
    ("show", "whole"): "Every stage.",
}
# Descriptions that say nothing the argument's name (or its enum, or its tool's description) does not.
SAYS_NOTHING = frozenset({"The run id.", "PASS, PASS_WITH_NOTES or FAIL.", "FULL, SLIM or pipeline_completion.",
                          "References checked.", "References verified.", "Issues found.", "Issues fixed.",
                          "Items addressed.", "An item still pending.", "Skill that made it.", "Mode it was made in.",
                          "The stage's mode.", "Only the one-line form."})


def served(commands: Iterable[Command]) -> dict[str, Tool]:
    """Every tool the server offers, by name."""
    commands = tuple(commands)
    by_path = {command.path: command for command in commands}
    out = {name: tool for name, tool in tools(commands).items() if name != "research"}
    out.update(research_tools(by_path[("research",)]))
    out[INIT] = _init_tool(by_path[(INIT,)])
    if "show" in out:  # the short form by default: its argument for the whole run
        schema = out["show"].input_schema
        out["show"] = dataclasses.replace(out["show"], input_schema={
            **schema, "properties": {**schema["properties"], lean.WHOLE: dict(lean.WHOLE_SCHEMA)}})
    return {name: _as_served(tool) for name, tool in sorted(out.items())}


def _init_tool(command: Command) -> Tool:
    """`init` on the served store: no directory to choose, the server serves one path."""
    tool = tool_of(INIT, (INIT,), command)
    schema = {**tool.input_schema, "properties": {k: v for k, v in tool.input_schema["properties"].items()
                                                  if k != "directory"}}
    schema.pop("required", None)
    description = "Make the served store (git init where needed); an existing one is kept (created: false)."
    tool = dataclasses.replace(tool, description=description, input_schema=schema)
    return worded(tool, wording_of({INIT: tool}))


def _as_served(tool: Tool) -> Tool:
    properties = tool.input_schema["properties"]
    changed = {}
    for (tool_name, name), description in MCP_WORDS.items():
        if tool_name == tool.name and name in properties:
            changed[name] = {**properties[name], "description": description}
    for name in (*FILE_ARGUMENTS.get(tool.name, ()), *PATH_OR_NAME.get(tool.name, ())):
        prop = changed.get(name, properties[name])
        kind = PATH_OR_NAME.get(tool.name, {}).get(name)
        where = IN_REPOSITORY if kind is None else AS_A_PATH[kind] + WHERE_A_PATH_IS
        changed[name] = {**prop, "description": f"{prop.get('description', '')} {where}".strip()}
    for (tool_name, name), (value, description) in MCP_DEFAULTS.items():
        if tool_name == tool.name:
            changed[name] = {**properties[name], "default": value, "description": description}
    for name, prop in properties.items():
        if prop.get("description") in SAYS_NOTHING:
            changed[name] = {key: value for key, value in prop.items() if key != "description"}
    if not changed:
        return tool
    return dataclasses.replace(tool, input_schema={**tool.input_schema, "properties": {**properties, **changed}})


def prepare(tool: Tool, arguments: dict[str, Any], worktree: Path | None) -> dict[str, Any]:
    """The call's arguments as the CLI takes them: the MCP defaults filled in, file arguments
    made absolute under the repository root (refused where they leave it)."""
    out = dict(arguments)
    if tool.name == "show" and out.get(lean.WHOLE) is not None and not isinstance(out[lean.WHOLE], bool):
        raise InvalidValue(f"show: {lean.WHOLE} takes boolean values, not {out[lean.WHOLE]!r}", argument=lean.WHOLE)
    for (tool_name, name), (value, _) in MCP_DEFAULTS.items():
        if tool_name == tool.name and out.get(name) is None:
            out[name] = value
    if worktree is None:
        return out
    problems: dict[str, str] = {}
    for name in (*FILE_ARGUMENTS.get(tool.name, ()), *PATH_OR_NAME.get(tool.name, ())):
        value = out.get(name)
        kind = PATH_OR_NAME.get(tool.name, {}).get(name)
        if kind is not None and not (isinstance(value, str) and names_a_file(kind, value)):
            continue  # a template's name, a key's text, a session's id
        if isinstance(value, str):
            out[name], problem = _in_repository(name, value, worktree)
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            resolved = [_in_repository(name, item, worktree) for item in value]
            out[name], problem = [path for path, _ in resolved], next((p for _, p in resolved if p), None)
        else:
            continue  # left out, or of the wrong type: the tool's own check says so
        if problem:
            problems[name] = problem
    if problems:
        more = {"arguments": list(problems)} if len(problems) > 1 else {}
        raise InvalidValue(f"{tool.name}: {'; '.join(problems.values())}", argument=next(iter(problems)), **more)
    return out


def _in_repository(name: str, value: str, worktree: Path) -> tuple[str, str | None]:
    """`value` relative to the repository root as an absolute path, and what is wrong with it."""
    joined = Path(os.path.normpath(worktree / value))
    # the path as written, and where its links lead
    for candidate, root in ((joined, worktree), (joined.resolve(), worktree.resolve())):
        if not candidate.is_relative_to(root):
            return value, (f"{name} {value!r} leads out of the repository; name a path inside it, relative to "
                           "the repository root")
    return str(joined), None


def result_text(tool: Tool, text: str) -> str:
    """The command's output as the tool's result: a research refusal in the common error shape."""
    return tool.common_shape(text) if isinstance(tool, ResearchTool) else text

"""What an agent may read before it acts, served as MCP resources and prompts: the agents guide
(statedir://guide), each template's rules (statedir://templates/<name>), and prompts that set an
agent to drive a run by `next` alone. Plain data; no MCP SDK here."""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statedir.api import template_reading, texts
from statedir.errors import InvalidValue

GUIDE = "statedir://guide"
TEMPLATES = "statedir://templates/"
TOOLS = "statedir://tools"
RUNS = "statedir://runs/"
STAGES = "/stages"  # statedir://runs/<run_id>/stages
BUS_SCHEMA = template_reading.BUS_SCHEMA_URI  # a bus session's shape
SESSION_SCHEMA = "bus-session"
PASSPORT_SCHEMA = "statedir://passport/schema"  # a Material Passport's shape (new's passport, for mid-entry)


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str


def listed(templates_dir: Path | None) -> list[Resource]:
    """The guide, then one resource per template (shipped, then the store's own)."""
    out = [Resource(GUIDE, "guide", "The agents guide", "Which tool when, exit and error codes, reading a refusal, "
                    "and the rule: never answer a MANDATORY checkpoint for the user.", "text/markdown"),
           Resource(TOOLS, "tools", "The groups of tools", "Every group of tools (statedir mcp --tools GROUP,...), "
                    "what it is for, its tools, and whether this server serves it.", "application/json"),
           Resource(BUS_SCHEMA, "bus session schema", "A bus session's shape", "The JSON Schema every bus write is "
                    "held to: session, phases (each entry: agent, status todo -> in_progress -> done, outputs a "
                    "mapping of contract fields, evidence and work_items lists of paths; nothing else), and free "
                    "top-level run variables (strings, lists of them, mappings of them).", "application/json"),
           Resource(PASSPORT_SCHEMA, "passport schema", "A Material Passport's shape", "The JSON Schema of a "
                    "Material Passport (Schema 9), as `new`'s passport gives one for mid-entry (verification_status "
                    "VERIFIED, integrity_pass_date, content_hash) and `show` reads them.", "application/json")]
    # by file name, none of them parsed: a broken one is listed too, and reading it says what is wrong
    for name in template_reading.names(templates_dir):
        out.append(Resource(TEMPLATES + name, f"template {name}", f"Template {name}: its rules",
                            f"The {name} template's stages, statuses and their moves, checkpoints, pipeline states, "
                            "actors and their actions.", "text/plain"))
    return out


@dataclass(frozen=True)
class Served:
    """What the server serves, for the resources that say so: each group's purpose and tools,
    the groups served, and the template of a run (by its id)."""

    groups: Mapping[str, tuple[str, tuple[str, ...]]]  # group -> (purpose, its tools)
    served: tuple[str, ...]
    template_of: Callable[[str], Any]  # the API's template of the run


def tools_listing(served: Served) -> dict[str, Any]:
    return {"groups": [{"name": name, "purpose": purpose, "served": name in served.served, "tools": list(tools)}
                       for name, (purpose, tools) in served.groups.items()],
            "how": "restart the server with --tools GROUP,... (or --tools all) to serve other groups"}


def run_stages(run_id: str, t: Any) -> dict[str, Any]:
    """A run's template's stages as a tool's `stage` argument takes them: each id (its aliases
    are accepted too), name, owner, decisions, the outputs `stage`/`output` accept, the fields each
    material's file must hold, and the statuses."""
    info = template_reading.described(t)
    aliases: dict[str, list[str]] = {}
    for alias, target in (t.doc.get("aliases") or {}).items():
        aliases.setdefault(str(target), []).append(str(alias))
    stages = [{"id": st["id"], "name": st["name"], "owner": st["owner"], **({"aliases": aliases[st["id"]]}
               if st["id"] in aliases else {}), "decisions": st["decisions"], "produces": st["produces"],
               "requires": st["requires"], "next": st["next"]} for st in info["stages"]]
    return {"run_id": run_id, "template": t.name, "stages": stages,
            "outputs": "a stage's output names one of its produces, the template's materials or series, or a version "
                       "label of one (research_v1), as written or with a note after it: 'Bibliography (22 sources)'"
                       + ("; this template takes free outputs too (recorded with a warning)"
                          if t.doc.get("free_outputs") is True else "; any other is refused")
                       + ("; a stage holds each name once (one already recorded changes nothing)"
                          if t.doc.get("outputs_once") is True else ""),
            "materials": info["materials"], **_fields(t), "statuses": [s["value"] for s in info["statuses"]],
            "checkpoint_responses": info["checkpoint_responses"]}


def _fields(t: Any) -> dict[str, Any]:
    """The fields each material's file must hold, where the template's schema check asks for them."""
    schemas = t.doc.get("material_schemas") or {}
    wanted = {str(name): [str(f) for f in spec["fields"]] for name, spec in schemas.items() if spec.get("fields")}
    if not wanted:
        return {}
    return {"material_fields": wanted,
            "material_fields_held": "a field is a top-level key of a YAML or JSON file or of a Markdown file's front "
                                    "matter, or a Markdown heading ('## Research Question' holds research_question); "
                                    "each stage's are checked when it is left"}


def read(uri: str, templates_dir: Path | None, served: Served | None = None) -> tuple[str, str]:
    """The resource's text and MIME type; INVALID_VALUE for a URI that names none."""
    if uri == GUIDE:
        return texts.agents_guide(), "text/markdown"
    if uri == TOOLS and served is not None:
        return json.dumps(tools_listing(served), ensure_ascii=False, indent=1), "application/json"
    if uri.startswith(RUNS) and uri.endswith(STAGES) and served is not None:
        run_id = uri[len(RUNS):-len(STAGES)]
        return json.dumps(run_stages(run_id, served.template_of(run_id)), ensure_ascii=False, indent=1), \
            "application/json"
    if uri == BUS_SCHEMA:
        return template_reading.schema_text(SESSION_SCHEMA), "application/json"
    if uri == PASSPORT_SCHEMA:
        return template_reading.schema_text("passport"), "application/json"
    if uri.startswith(TEMPLATES):
        name = uri[len(TEMPLATES):]
        return template_reading.rules(name, templates_dir), "text/plain"  # a name only: no file read by path
    raise InvalidValue(f"no resource {uri!r}: read {GUIDE}, {TOOLS}, {BUS_SCHEMA}, {PASSPORT_SCHEMA}, "
                       f"{TEMPLATES}<name> or {RUNS}<run_id>{STAGES}",
                       uri=uri)


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)
    text: str
    # An optional argument's words in the text: (given, its format with {value}; left out, what stands)
    phrases: tuple[tuple[str, str, str], ...] = ()

    def render(self, arguments: dict[str, str] | None) -> str:
        given = {k: v for k, v in (arguments or {}).items() if isinstance(v, str)}
        missing = [name for name, _, required in self.arguments if required and not given.get(name)]
        if missing:
            raise InvalidValue(f"prompt {self.name} needs {', '.join(missing)}", argument=missing[0])
        unknown = sorted(set(given) - {name for name, _, _ in self.arguments})
        if unknown:
            raise InvalidValue(f"prompt {self.name} takes no argument {', '.join(unknown)}", argument=unknown[0])
        values = {name: given.get(name, "") for name, _, _ in self.arguments}
        for name, when_given, left_out in self.phrases:
            values[name] = when_given.format(value=values[name]) if values[name] else left_out
        return self.text.format(**values)


_DRIVE = """Drive run {run_id} to its end with statedir's tools, taking only moves statedir lists.

1. Read the rules once: the resource statedir://guide, and statedir://templates/<the run's template>.
2. Loop: call `next` with run_id {run_id}. Take one of the moves it lists, with the arguments it
   names and only their allowed values, by the actor it names; pass expect_head (the commit your
   last write returned) so you never write on a state you did not see. A blocked move says what it
   needs (a material, a verdict): do that work first. Files you name are relative to the
   repository root.
3. A refusal is a tool error {{error: {{code, message, details}}}}: its details carry the legal
   moves; read them and choose again. HEAD_MOVED: read the run again (`status`) before retrying.
4. At a MANDATORY checkpoint call `confirm`: the user is asked through your client and their
   answer is recorded. Never answer it for them; if it is refused (USER_ANSWER_REQUIRED,
   USER_DECLINED), show the user the run's `status` and ask what they want.
5. Stop when the run is completed or aborted (`next` lists no move), and tell the user where it ended.
"""

_START = """Start a run {run_id} about: {topic}
Call `new` with run_id {run_id} and topic as given, {template},
then drive it as the prompt drive_run says: take only the moves `next` lists, and never answer a
MANDATORY checkpoint for the user.
"""

PROMPTS = {p.name: p for p in (
    Prompt("drive_run", "Drive a run by `next` alone", "Take a run to completed or aborted, choosing each move "
           "from those `next` lists; MANDATORY checkpoints left to the user.",
           (("run_id", "The run to drive.", True),), _DRIVE),
    Prompt("start_run", "Start a run", "Create a run, then drive it by `next` alone.",
           (("run_id", "The new run's id.", True), ("topic", "What the run is about.", True),
            ("template", "A template's name (default: the store's).", False)), _START,
           (("template", "template {value}", "no template (the store's default)"),)),
)}


def prompt(name: str, arguments: dict[str, str] | None) -> tuple[Prompt, str]:
    """The prompt and its text for these arguments; INVALID_VALUE for an unknown prompt or argument."""
    found = PROMPTS.get(name)
    if found is None:
        raise InvalidValue(f"no prompt {name!r}: one of {', '.join(PROMPTS)}", prompt=name)
    return found, found.render(arguments)

"""The MCP server over stdio (the official SDK's low-level Server): the only module that
imports the SDK. Tool calls run one at a time in a worker thread, on one store kept open; a
MANDATORY checkpoint's question goes to the user (elicitation) before `confirm` runs there."""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server.elicitation import AcceptedElicitation
from mcp.server.lowlevel import Server
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve, build_resolver_plans, resolve_arguments
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

import statedir
from statedir.api import places
from statedir.errors import StatedirError
from statedir.mcp import resources
from statedir.mcp.calls import Served
from statedir.mcp.catalog import GROUPS
from statedir.mcp.checkpoint_question import Answer, Question
from statedir.mcp.host import Host
from statedir.mcp.outcome import Outcome
from statedir.mcp.outputs import COMMON_NOTE
from statedir.mcp.roles import DEFAULT_ROLES
from statedir.mcp.tools import Tool
from statedir.mcp.vocabulary import UNION_NOTE

INSTRUCTIONS = (
    "statedir keeps this pipeline's state; every write is one git commit and may be refused by the rules. "
    "Read the resource statedir://guide, and statedir://templates/<name> for a template's rules; the prompt "
    "drive_run drives a run. Call `next` for a run's legal moves and take only those it lists. "
    + UNION_NOTE
    + " " + COMMON_NOTE
    + " Results are JSON documents; a refusal is a tool error {error: {code, message, details}}; NOT_A_STORE: "
    "call `init`. File arguments are relative to the repository root (one leading out of it is refused). "
    "Pass expect_head (the commit of your last write, or HEAD from an error's details) to write only on the "
    "state you saw: a write is refused (HEAD_MOVED) only if its run or bus session changed after it. "
    "Writes act in this server's role (each write tool's `actor` enum): another agent's work needs its own server. "
    "Never answer a MANDATORY checkpoint for the user: `confirm` there asks the user through your client's "
    "form and records their answer; if it is refused (USER_ANSWER_REQUIRED, USER_DECLINED), show the user "
    "`status` and ask them. A checkpoint's prompt is the user's to read, not yours to answer."
)
CallResult = types.CallToolResult | types.InputRequiredResult
HEAD_META = "statedir/head"  # the result's _meta key holding the repository's HEAD after the call
EXIT_META = "statedir/exit_code"  # and the exit code the CLI would have given


def build(root: Path, host: Host, groups: tuple[str, ...] = GROUPS, roles: tuple[str, ...] = DEFAULT_ROLES,
          client_name: str | None = None) -> Server[Any]:
    """An MCP server for the store at `root`, its tools (those of `groups`) generated from the CLI's
    commands, its callers acting in `roles` only; `client_name` names the client in the record
    (else its handshake's clientInfo name does)."""
    served = Served(root, host, groups, roles)
    one_at_a_time = anyio.Lock()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        schemas = served.input_schemas()
        return types.ListToolsResult(tools=[_listed(tool, schemas[tool.name]) for tool in served.tools.values()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> CallResult:
        async with one_at_a_time:
            asked = await anyio.to_thread.run_sync(served.question, params.name, params.arguments)
        if isinstance(asked, Outcome):
            return _result(asked)
        answer: Answer | None = None
        if isinstance(asked, Question):
            got = await _ask_user(ctx, params, asked)
            if isinstance(got, types.InputRequiredResult):  # protocol 2026-07-28: the client asks, then calls again
                return got
            if isinstance(got, StatedirError):
                return _result(served.refusal(got, params.name))
            answer = got
        async with one_at_a_time:
            outcome = await anyio.to_thread.run_sync(served.call, params.name, params.arguments, answer,
                                                     _client(ctx, client_name))
        return _result(outcome)

    def _result(outcome: Outcome) -> types.CallToolResult:
        meta = {HEAD_META: outcome.head, EXIT_META: outcome.exit_code}
        # the document once (structured content), its text a one-line summary (a refusal's: its error document)
        return types.CallToolResult(content=[types.TextContent(text=outcome.line)], is_error=outcome.is_error,
                                    structured_content=outcome.structured, _meta=meta)

    return Server("statedir", version=statedir.__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool, **_reading(served))


def wire_bytes(message: BaseModel) -> int:
    """The bytes of `message` (a result, or a request's params) as the server writes it on stdio,
    less the JSON-RPC envelope around it: compact JSON, by alias, nulls left out, the SDK's own
    serialization. Read back from what a client received (a `tools/list` result whole: its tools and
    the protocol's `ttlMs`, `cacheScope`, `resultType`, `_meta`), it counts what came over the wire:
    the one measure bench/mcp.py, bench/mcp_run.py and tests/mcp hold the tool list to."""
    return len(message.model_dump_json(by_alias=True, exclude_none=True).encode())


def _client(ctx: Any, client_name: str | None) -> str:
    """The calling client as its Statedir-Client trailer says it: the name the server was started with
    (else the handshake's clientInfo name) and the clientInfo version."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return places.client_label(client_name or (info.name if info is not None else None),
                                 info.version if info is not None else None)


def _reading(served: Served) -> dict[str, Any]:
    """The handlers for what an agent reads before it acts: the guide and the templates' rules
    (resources), and the prompts."""
    def templates_dir() -> Path:
        return served.root / "templates"  # the store's own templates (none yet where it is no store)

    def what_is_served() -> resources.Served:
        return resources.Served(served.groups, served.served_groups, lambda run_id: served.sd.load(run_id)[0])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        found = await anyio.to_thread.run_sync(resources.listed, templates_dir())
        return types.ListResourcesResult(resources=[
            types.Resource(uri=r.uri, name=r.name, title=r.title, description=r.description, mime_type=r.mime_type)
            for r in found])

    async def list_resource_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            uri_template=resources.TEMPLATES + "{name}", name="template", title="A template's rules",
            description="A template's stages, statuses and moves, checkpoints and actors, by its name "
                        "(the `templates` tool lists them).", mime_type="text/plain"), types.ResourceTemplate(
            uri_template=resources.RUNS + "{run_id}" + resources.STAGES, name="run stages",
            title="A run's stages", description="The stages of the run's template as tools take them: ids (aliases "
            "accepted too), names, decisions, the outputs a stage accepts, the fields a material's file must hold, "
            "statuses.", mime_type="application/json")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            text, mime = await anyio.to_thread.run_sync(resources.read, str(params.uri), templates_dir(),
                                                        what_is_served())
        except StatedirError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message, exc.as_json()["error"]) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), mime_type=mime,
                                                                             text=text)])

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=p.name, title=p.title, description=p.description,
            arguments=[types.PromptArgument(name=n, description=d, required=r) for n, d, r in p.arguments])
            for p in resources.PROMPTS.values()])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            found, text = resources.prompt(params.name, params.arguments)
        except StatedirError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message, exc.as_json()["error"]) from None
        return types.GetPromptResult(description=found.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=text))])

    return {"on_list_resources": list_resources, "on_list_resource_templates": list_resource_templates,
            "on_read_resource": read_resource, "on_list_prompts": list_prompts, "on_get_prompt": get_prompt}


def _listed(tool: Tool, input_schema: dict[str, Any]) -> types.Tool:
    """The tool as listed: its title (once: the client reads it before the annotations') and its
    four hints, those left out the protocol's defaults (catalog.Kind.hints)."""
    kind = tool.kind
    hints = types.ToolAnnotations(**kind.hints())
    return types.Tool(name=tool.name, title=kind.title, description=tool.description, input_schema=input_schema,
                      output_schema=tool.output_schema, annotations=hints)


def _can_elicit(ctx: Any) -> bool:
    """Whether the client takes form elicitation (a bare `elicitation: {}` is form, as the SDK reads it)."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _form(question: Question) -> type[BaseModel]:
    """The client's form: the response (no default: the user picks it), and the next stage where the
    graph leaves one (the template's default preset), each an enum."""
    def field(values: tuple[str, ...], default: str | None, title: str, description: str) -> Any:
        def enum(schema: dict[str, Any]) -> None:  # one value too: an enum the client lists, not a const
            schema.pop("const", None)
            schema["enum"] = list(values)
        kind: Any = Literal[values]
        return (kind, Field(default if default is not None else ..., title=title, description=description,
                            json_schema_extra=enum))
    fields = {question.answers: field(question.responses, None, "Your answer",
                                      "How the pipeline goes on (the message says what each means)")}
    if question.choices:
        fields["next"] = field(question.choices, question.next_default, "Next stage", "Where the pipeline goes next")
    for name, options, ask in question.picks:  # a decision the answer takes besides (no default: the user picks)
        fields[name] = field(options, None, name.capitalize(), ask)
    for name in question.free:  # free text the user may give (a reason: the message says when it is needed)
        fields[name] = (str, Field("", title=name.capitalize(), description="In your own words"))
    return create_model("CheckpointAnswer", __config__=ConfigDict(title=question.title), **fields)


async def _ask_user(ctx: Any, params: types.CallToolRequestParams,
                    question: Question) -> Answer | StatedirError | types.InputRequiredResult:
    """Ask the user through the SDK's resolver, which elicits the way the connection speaks: an
    input-required result (protocol 2026-07-28 on) or an elicitation request mid-call (older)."""
    if not _can_elicit(ctx):
        return question.unaskable()
    form = _form(question)

    def users_answer() -> Elicit[Any]:
        return Elicit(question.message, form)

    wanted = {"answer": (Resolve(users_answer), True)}  # True: the whole outcome, a decline included
    try:
        resolved = await resolve_arguments(wanted, build_resolver_plans(wanted, set()), {},
                                           Context(request_context=ctx, input_params=params))
    except ToolError as exc:  # accepted with content that does not fit the form
        return question.misfit(_misfits(exc))
    if isinstance(resolved, types.InputRequiredResult):
        return resolved
    outcome = resolved["answer"]
    if not isinstance(outcome, AcceptedElicitation):
        return question.declined(outcome.action)
    data = outcome.data
    return Answer(question, getattr(data, question.answers), getattr(data, "next", None),
                  tuple((name, getattr(data, name, None) or None) for name in question.free),
                  tuple((name, getattr(data, name, None)) for name, _, _ in question.picks))


def _misfits(exc: BaseException) -> dict[str, Any]:
    """The form's fields an accepted answer got wrong, and what was given for each (None: left out),
    from the validation error behind the SDK's refusal (its wording names the SDK's own resolver)."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ValidationError):
        cause = cause.__cause__
    if cause is None:
        return {"answer": None}
    wrong: dict[str, Any] = {}
    for error in cause.errors():
        name = ".".join(str(part) for part in error["loc"]) or "answer"
        wrong[name] = None if error["type"] == "missing" else error.get("input")
    return wrong


def serve(root: Path, host: Host, groups: tuple[str, ...] = GROUPS, roles: tuple[str, ...] = DEFAULT_ROLES,
          client_name: str | None = None) -> None:
    """Serve the store on stdin/stdout until the client closes stdin or goes away; logs go to stderr."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="statedir mcp: %(levelname)s %(message)s")
    server = build(root, host, groups, roles, client_name)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    except* (BrokenPipeError, ConnectionResetError):
        # The client went away mid-call: the call ran to its end, only its reply is lost, and a
        # traceback in the host's log would report a fault that is not the server's.
        logging.getLogger("statedir.mcp").warning("the client closed the connection; stopping")

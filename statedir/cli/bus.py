"""`statedir bus init|set|append|get|clear SESSION [FIELD] [VALUE]`: hasbrains-agent-kit's pipeline-state.sh,
same argument order and output, on the store. Callbacks parse, call one Bus method, print."""
# Lazy imports: cli.render, sys, typer.core: imported by the command that uses them: `statedir COMMAND` loads this
#   module for any of its commands, and a plain call loads no typer (docs/cli-startup.md).
from __future__ import annotations

import json as json_mod
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

from statedir.cli.common import DEFAULT_ACTOR, ActorOpt, ExpectOpt, JsonOpt, StoreOpt, document, open_store
from statedir.cli.registry import SUBCOMMANDS, app, sub_group, typed
from statedir.cli.render import emit_json
from statedir.commands.params import Argument, Option

if TYPE_CHECKING:
    import typer

HELP = ("The handoff bus: run variables, per-phase outputs and evidence paths that an orchestrator and its "
        "agents pass by lookup (drop-in for hasbrains-agent-kit's pipeline-state.sh). Each change is one commit of "
        "bus/<SESSION>.yaml of the store `statedir init` makes once.")


def _verbatim() -> type:
    """typer's command class for the bus: every word but the command's own options is an argument,
    in order, so a value may start with '-' (a negative number, a user's "- fix the login bug"
    request, which click would read as the short options -f -i -x ... -h, printing help and storing
    nothing), as pipeline-state.sh takes any value. Made when typer reads a call (`direct` reads
    the plain ones the same way without it)."""
    from typer.core import TyperCommand

    class Verbatim(TyperCommand):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            flags: set[str] = set()
            valued: set[str] = set()
            for param in self.get_params(ctx):
                if getattr(param, "param_type_name", "") == "option":
                    (flags if getattr(param, "is_flag", False) else valued).update(
                        [*param.opts, *param.secondary_opts])
            options: list[str] = []
            words: list[str] = []
            rest = iter(args)
            for word in rest:
                if word == "--":
                    words.extend(rest)
                elif word in flags or (word.startswith("--") and word.partition("=")[0] in valued and "=" in word):
                    options.append(word)
                elif word in valued:
                    value = next(rest, None)
                    if value is None:  # click's own "Option '--actor' requires an argument."
                        return super().parse_args(ctx, [*options, word])
                    options.extend([word, value])
                else:
                    words.append(word)
            return super().parse_args(ctx, [*options, "--", *words])

    return Verbatim


def _group() -> typer.Typer:
    """The bus's typer sub-group, built when typer reads a call."""
    bus = sub_group("bus", HELP)
    verbatim = _verbatim()
    for name, function in SUBCOMMANDS["bus"].items():
        bus.command(name, cls=verbatim)(typed(function))
    return bus


SessionArg = Annotated[str, Argument(
    help="The session label <YYYY-MM-DD>-<slug>, e.g. 2026-06-30-member-blog-gating (or the path of its file, "
         "as `init` prints it).", show_default=False)]
FieldArg = Annotated[str, Argument(
    help="The field; dots reach nested entries: phases.1-design.status.", show_default=False)]
ValueArg = Annotated[str, Argument(help="The value (a string; empty when left out, as in pipeline-state.sh).")]


def _jq(value: Any) -> str:
    """JSON as jq prints it: indented by two, UTF-8, control characters and DEL escaped."""
    return json_mod.dumps(value, ensure_ascii=False, indent=2).replace("\x7f", "\\u007f")


def _raw(value: Any) -> str:
    """A value as hasbrains-agent-kit's `pipeline-state.sh` prints it (`jq -r`): strings raw, lists and mappings as JSON."""
    return value if isinstance(value, str) else _jq(value)


@app.subcommand("bus", "init")
def init(session: SessionArg,
         clean: Annotated[Optional[Path], Option(
             "--clean", help="Also empty this scratch folder (e.g. .ai_log) of what git ignores, keeping .gitkeep: pipeline-state.sh's "
                             "cleanup, opt-in; refused, removing nothing, outside the repository, where git tracks files, where "
                             "a file is neither tracked nor ignored, or where it holds a git repository.")] = None,
         store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
         expect: ExpectOpt = None) -> None:
    """Start SESSION fresh ({session, phases: {}}) and print its file's path (pass it on as state_file).

    No other session is touched.
    """
    result = document("bus_init", open_store(store), locals()).value
    if json:
        emit_json(result)
    else:
        print(result["path"])


def _told(result: dict[str, Any]) -> None:
    """A write's one line, to a person at a terminal only: a script's stdout stays as
    pipeline-state.sh leaves it (empty), and so does a pipe's stderr."""
    import sys

    if sys.stderr.isatty():
        done = result.get("summary") or ("nothing changed" if not result.get("commit") else "done")
        print(f"ok  {done}" + (f"  [{result['commit'][:10]}]" if result.get("commit") else ""), file=sys.stderr)


@app.subcommand("bus", "set")
def set_(session: SessionArg, field: FieldArg, value: ValueArg = "",
         store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
         expect: ExpectOpt = None) -> None:
    """Store a string at FIELD, replacing whatever it held (creates the session if missing).

    A phase's status moves forward only: todo -> in_progress -> done.
    """
    result = document("bus_set", open_store(store), locals()).value
    if json:
        emit_json(result)
    else:
        _told(result)


@app.subcommand("bus", "append")
def append(session: SessionArg, field: FieldArg, value: ValueArg = "",
           check_path: Annotated[bool, Option(
               "--check-path", help="Refuse a VALUE that is not an existing path inside the repository "
                                    "(relative to its top), so gates rest on evidence.")] = False,
           store: StoreOpt = None, json: JsonOpt = False, actor: ActorOpt = DEFAULT_ACTOR,
           expect: ExpectOpt = None) -> None:
    """Add VALUE to the list at FIELD, creating the list (and the session) if missing."""
    result = document("bus_append", open_store(store), locals()).value
    if json:
        emit_json(result)
    else:
        _told(result)


@app.subcommand("bus", "get")
def get(session: SessionArg,
        field: Annotated[Optional[str], Argument(
            help="The field (dotted for nested entries); left out: the whole session.", show_default=False)] = None,
        store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Print FIELD's value raw (a list or mapping as JSON; nothing for a missing field), or the
    whole session as JSON. A missing session exits 1."""
    value = document("bus_get", open_store(store), locals()).value
    if json:
        emit_json(value)
    else:  # a value is data: raw into a pipe, as pipeline-state.sh prints it; escaped only for a terminal
        import sys

        from statedir.cli.render import unescaped

        out = sys.stdout if sys.stdout.isatty() else unescaped(sys.stdout)
        if field is None:
            print(_jq(value), file=out)
        elif value is not None:
            print(_raw(value), file=out)


@app.subcommand("bus", "clear")
def clear(session: SessionArg, store: StoreOpt = None, json: JsonOpt = False,
          actor: ActorOpt = DEFAULT_ACTOR, expect: ExpectOpt = None) -> None:
    """Remove SESSION (one commit; git history keeps it). A missing session changes nothing."""
    result = document("bus_clear", open_store(store), locals()).value
    if json:
        emit_json(result)
    else:
        print(f"cleared {result['path']}" if result.get("commit") else result["summary"])


app.group("bus", _group, help=HELP)

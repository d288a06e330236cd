"""What an MCP agent reads, in its own words. A message, a warning and what blocks a move are
said in them where they are made (`McpWords`: a refusal's next step and options are data,
statedir.hints). The tools' descriptions come from the command line's help, whose `--flag` and
`statedir X` become the tool's argument name and the tool `x` (`Wording.describe`), read from the
command table's parameters (statedir.commands.table). No MCP SDK here.

`statedir pipeline RUN running` in backquotes becomes `pipeline {run_id: RUN, state: running}`:
its words are read as the command line reads them (options by name, positionals in order).
"""
from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from statedir.commands.table import Command, Parameter
from statedir.hints import FLAG_OF_OPTION, Hint, Words

EXPECT, EXPECT_HEAD = "expect", "expect_head"
_SPAN = re.compile(r"`statedir ([^`]*)`")
_BARE = re.compile(r"\bstatedir ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)\b(?: ([A-Z][A-Z_]*)\b)?")  # a flag and its metavar
_WORD = re.compile(r"\b[A-Z][A-Z_]+\b")
# Spans translated as a whole or not at all: a command line in backquotes, a value quoted back ('x', "x")
_KEPT = re.compile(r"`[^`]*`|(?<![A-Za-z])'[^'\n]*'(?![A-Za-z])|(?<![A-Za-z])\"[^\"\n]*\"(?![A-Za-z])")
_SERVED = frozenset({"store", "json"})
# Where the command line's help speaks of exit codes and printing, MCP's own phrasing (results,
# is_error): a tool's description in place of its command's first paragraph.
DESCRIPTIONS = {
    "bus_get": "The field's value (a list or mapping as JSON; null for a missing field), or the whole session. "
               "A missing session is an error.",
    "bus_init": "Start session fresh ({session, phases: {}}); the result's `path` is its file in the repository.",
    "material": "Register the next version of a material; the result's `version_label` names it.",
    "prereq": "Check the prerequisites for entering a stage: `prerequisites_met` false, and what is missing, "
              "when not met (a result, not an error).",
    "validate": "Check files against their schemas: `valid`, and the `errors` (file, path, message) when not "
                "(a result, not an error).",
    "verify": "Replay history: `clean` when every commit that touched the store is a legal transition, its "
              "`findings` when not (a result, not an error).",
    "get": "One value by dotted path (a key with a dot, like stage 2.5, matches whole).",
    "show": "A run's state: by default its current stage and what it needs.",
    "sync": "Fetch, merge (never rebase) with the store's merge driver, validate and verify, push.",
    "templates": "List the built-in templates and the store's own; with name, describe that one.",
}
# Words of the command line's help that say nothing over MCP (an array takes many values anyway;
# the docs folder is not the agent's to read) or name the wrong tool (the bus's `init`).
_DROPPED = re.compile(r" \(repeatable\)|; repeatable(?=[).])| ?See docs/[\w./-]+\.md\.?|,? ?see docs/[\w./-]+\.md")
_BUS_INIT = re.compile(r"as `init` prints it")
# The bus's help speaks of the shell script it stands in for, which an MCP agent has not got.
_BUS_SCRIPT = re.compile(r",? as in pipeline-state\.sh|: pipeline-state\.sh's cleanup, opt-in|"
                         r" \(drop-in for [^)]*pipeline-state\.sh\)")
# A session has no template: its actor is the commit's author, checked against no roles.
_ACTOR_HELP = "Who asks (checked against the template's roles)"
_BUS_ACTOR = "Who writes (the commit's author; a session has no template, so no roles are checked)."
# A command another agent's role takes (the command line's default actor): over MCP, that agent's own
# server takes it (a server acts in its --role only; the `actor` enum says which this one is).
_OWN_ACTOR = re.compile(r"\(actor ([a-z_]+)\)\.$")
_OWN_SERVER = r"(\1's: its own MCP server, started in that role)."
# The served `init` takes no directory: the server serves one path.
_INIT_CALL = re.compile(r"run `statedir init[^`]*`")


def _name(param: Parameter) -> str:
    return EXPECT_HEAD if param.name == EXPECT else str(param.name)


def _metavar(param: Parameter) -> str:
    return param.metavar or param.name.upper()


class Wording:
    """The table: each tool's flags and positionals by name, the words that name each tool."""

    def __init__(self, commands: Mapping[str, tuple[tuple[str, ...], Command]]) -> None:
        self.tools = {path: name for name, (path, _) in commands.items()}
        self.flags: dict[str, dict[str, str]] = {}
        self.switches: dict[str, set[str]] = {}  # flags that take no value
        self.positionals: dict[str, list[str]] = {}
        self.metavars: dict[str, dict[str, str]] = {}  # a tool's placeholders (RUN, FIELD, REV) -> arguments
        common: dict[str, str] = {}
        for name, (_, command) in commands.items():
            params = [p for p in command.parameters if p.name not in _SERVED]
            own = {opt: _name(p) for p in params if p.kind == "option"
                   for opt in [*p.flags, *p.off_flags] if opt.startswith("--")}
            self.flags[name] = own
            self.switches[name] = {opt for p in params if p.flag for opt in p.flags}
            self.positionals[name] = [_name(p) for p in params if p.kind == "argument"]
            self.metavars[name] = {_metavar(p): _name(p) for p in params if p.name != EXPECT and p.metavar}
            for opt, arg in own.items():
                common.setdefault(opt, arg)
        self.common = common

    def say(self, text: str, tool: str | None = None) -> str:
        """`text`, the command line's help, with its words put as the tool's (`tool`: whose flags come first).
        A value quoted back ('--next', a topic) is the caller's own and stays as it was written."""
        text = _INIT_CALL.sub("call the tool `init`", text)
        out, at = [], 0
        for match in _KEPT.finditer(text):
            out += [self._prose(text[at:match.start()], tool), self._quoted(match.group(0))]
            at = match.end()
        return "".join([*out, self._prose(text[at:], tool)])

    def describe(self, text: str, tool: str) -> str:
        """A tool's or argument's description over MCP: its own phrasing where the command line's
        speaks of exit codes or printing, then in the tool's words (`say`)."""
        if text.startswith(_ACTOR_HELP):  # a server's caller acts in a role, never as a person
            return _BUS_ACTOR if tool.startswith("bus_") else f"{_ACTOR_HELP}."
        text = _BUS_SCRIPT.sub("", _BUS_INIT.sub("as `bus_init` returns it", _DROPPED.sub("", text))) \
            if tool.startswith("bus_") else _DROPPED.sub("", text)
        return self.say(_OWN_ACTOR.sub(_OWN_SERVER, text), tool)

    def _quoted(self, span: str) -> str:
        found = _SPAN.fullmatch(span)
        return self._call(found.group(1), span) if found else span

    def _prose(self, text: str, tool: str | None) -> str:
        text = _BARE.sub(self._bare, text)
        text = _FLAG.sub(lambda m: self._flag(m, tool), text)
        placeholders = self.metavars.get(tool or "", {})
        return _WORD.sub(lambda m: placeholders.get(m.group(0), m.group(0)), text) if placeholders else text

    def _flag(self, match: re.Match[str], tool: str | None) -> str:
        """`--flag` as its argument's name; its placeholder after it (`--at REV`) dropped."""
        flag, placeholder = match.group(1), match.group(2)
        name = self.flags.get(tool or "", {}).get(flag) or self.common.get(flag)
        if name is None:
            return match.group(0)
        drop = placeholder is not None and placeholder in (name.upper(), "REV", "N", "DATE", "FILE", "TEXT")
        return name if drop or placeholder is None else f"{name} {placeholder}"

    def _tool(self, words: list[str]) -> tuple[str, int] | None:
        for size in (2, 1):
            name = self.tools.get(tuple(words[:size]))
            if name is not None and len(words) >= size:
                return name, size
        return None

    def _bare(self, match: re.Match[str]) -> str:
        found = self._tool(match.group(1).split())
        if found is None:
            return match.group(0)
        name, size = found
        rest = match.group(1).split()[size:]
        return " ".join([name, *rest])

    def _call(self, words: str, whole: str) -> str:
        """One backquoted command line as a tool call: `tool {argument: value, ...}`."""
        try:
            tokens = shlex.split(words)
        except ValueError:
            tokens = words.split()
        found = self._tool(tokens)
        if found is None:
            return whole
        name, size = found
        flags, switches, positionals = self.flags[name], self.switches[name], list(self.positionals[name])
        given: list[str] = []
        rest = tokens[size:]
        while rest:
            token = rest.pop(0)
            flag, _, inline = token.partition("=")
            if flag in flags:
                value = inline or ("true" if flag in switches or not rest else rest.pop(0))
                given.append(f"{flags[flag]}: {value}")
            elif token.startswith("-") or not positionals:
                given.append(token)
            else:
                given.append(f"{positionals.pop(0)}: {token}")
        return f"`{name} {{{', '.join(given)}}}`" if given else f"`{name}`"


class McpWords(Words):
    """A refusal's next step (statedir.hints) as a tool call, `doctor {fix: true}`, and an option
    of the tool being called (`tool`) as its argument, said from the data where a message is made
    (the server sets them in `WORDS` for the call, and words a refusal made before it again)."""

    def __init__(self, wording: Wording, tool: str | None = None) -> None:
        self.wording, self.tool = wording, tool

    def hint(self, hint: Hint) -> str:
        name = self.wording.tools.get(tuple(hint.command.split()))
        if name is None:  # no tool of this server's (`mcp`, `serve`): the command line it is
            return f"statedir {hint.command}"
        if hint.command == "init":  # the served `init` takes no directory, no branch: it makes the served store
            return name
        positionals = self.wording.positionals[name]
        given = [(name_, value) for name_, value in hint.args.items() if value is not None and value is not False]
        first = sorted((positionals.index(n), n, v) for n, v in given if n in positionals)
        flags = self.wording.flags[name]
        rest = [(flags.get("--" + n.replace("_", "-"), n), v) for n, v in given if n not in positionals]
        said = [f"{n}: {_value(one)}" for n, v in [(n, v) for _, n, v in first] + rest
                for one in (v if isinstance(v, list | tuple) else [v])]
        return f"{name} {{{', '.join(said)}}}" if said else name

    def option(self, name: str) -> str:
        """The argument an option is; a flag that is a tool of its own (the research ledger's action
        flags: `--start-run` is `research_start_run`) that tool."""
        flag = "--" + FLAG_OF_OPTION.get(name, name).replace("_", "-")
        own = self.wording.tools.get(("research", flag))
        if own is not None:
            return own
        return self.wording.flags.get(self.tool or "", {}).get(flag) or self.wording.common.get(flag) or flag

    def fill(self, template: str, hints: tuple[Hint, ...]) -> str:
        """As every entry point fills it, an option's placeholder after it (`{opt:at} REV`) dropped
        where it only names the argument again (`at`, not `at REV`)."""
        if "{opt:" in template:
            template = _OPTION.sub(self._option, template)
        return super().fill(template, hints)

    def _option(self, found: re.Match[str]) -> str:
        name, placeholder = self.option(found[1]), found[2].strip()
        if name.startswith("--"):  # no argument of this server's: as the command line says it
            return name + found[2]
        if not placeholder or placeholder in (name.upper(), "REV", "N", "DATE", "FILE", "TEXT"):
            return name
        return f"{name} {placeholder}"


_OPTION = re.compile(r"\{opt:([a-z][a-z0-9_]*)\}((?: [A-Z][A-Z_]*\b)?)")


def _value(value: object) -> str:
    return "true" if value is True else str(value)


# A size refusal names the Python function and its parameter (`stage(): outputs holds ...`); over
# MCP the argument is the tool's (`output`), so an agent finds it in the tool's input schema.
_FUNCTION = re.compile(r"^[a-z_]+\(\): ")


def argument_named(doc: dict[str, object], tool: str, arguments: set[str]) -> dict[str, object]:
    """A refusal whose `details.argument` is no argument of `tool` (the API's plural, `outputs`,
    of the tool's `output`) in the tool's words: that argument, and the tool's name before it."""
    error = doc.get("error")
    if not isinstance(error, dict) or not isinstance(error.get("details"), dict):
        return doc
    named, message = error["details"].get("argument"), error.get("message")
    if not isinstance(named, str) or not isinstance(message, str) or not _FUNCTION.match(message):
        return doc
    own = named if named in arguments else next(
        iter(sorted(a for a in arguments if named in (a + "s", a + "es"))), named)
    rest = _FUNCTION.sub("", message, count=1)
    if own != named:
        rest = re.sub(rf"^{re.escape(named)}\b", own, rest, count=1)
    return {**doc, "error": {**error, "message": f"{tool}: {rest}", "details": {**error["details"], "argument": own}}}

"""Running a tool call in-process: the API the command table names for the tool's command
(statedir.api.documents) called with the call's arguments on one store kept open, its document
(what the command's --json prints) handed back, nothing printed or read back.
A call's `expect_head` is the command's --expect (checked by the store, under its lock). A
MANDATORY checkpoint is the user's: `confirm` there runs only on the user's answer (the server
asks through elicitation), recorded `answered_by: user`; so do a FAIL-loop `resolve`, a failure
mode's `acknowledge` and a compliance block's `compliance --override` (statedir.mcp.users_answer).
What a call gives back, in the tool's words, is statedir.mcp.outcome's. No MCP SDK here."""
from __future__ import annotations

import contextlib
import json
import sys
import threading
from pathlib import Path
from typing import Any

from statedir.api import documents, places, vocabularies
from statedir.api.places import CLIENT, CONFIG, FlagWording
from statedir.commands.document import Document
from statedir.errors import InvalidValue, NotAStore, StatedirError
from statedir.hints import WORDS
from statedir.mcp import lean, outputs, races, roles, served_tools, users_answer, vocabulary
from statedir.mcp.catalog import GROUP_PURPOSES, GROUPS
from statedir.mcp.checkpoint_question import Answer, Question
from statedir.mcp.host import Host
from statedir.mcp.outcome import Outcome, is_document, is_error_document, worded
from statedir.mcp.roles import DEFAULT_ROLES
from statedir.mcp.tools import EXPECT_HEAD, Tool, wording_of
from statedir.mcp.wording import McpWords, argument_named

# Calls run one at a time in a process, whichever server (in-process tests hold several) they
# come from: a store's lock is per process, and the served store is each server's one StateDir.
_ONE_AT_A_TIME = threading.Lock()
_LOGGED: set[str] = set()  # warnings on stderr already: each said once a process, as the CLI says them


class Served:
    """One store held open for a server's lifetime and the CLI's commands as tools; a call
    calls the API its command names, one call at a time."""

    def __init__(self, root: Path, host: Host, groups: tuple[str, ...] = GROUPS,
                 roles: tuple[str, ...] = DEFAULT_ROLES) -> None:
        self.host = host
        self.roles = roles  # the roles this server's callers act in (statedir.mcp.roles)
        self.root = root.absolute()
        self._sd: Any = None  # opened on the first call that needs it: a bad store is each call's refusal
        self._config = b""  # its statedir.yaml as opened
        self.tools: dict[str, Tool] = served_tools.served(host.commands)
        self.chosen(groups)
        self._vocabulary: tuple[tuple[tuple[str, int], ...], dict[str, dict[str, Any]]] | None = None

    def chosen(self, groups: tuple[str, ...]) -> None:
        """Serve only the tools of `groups`; messages still name any command in its tool's words."""
        self.wording = wording_of(self.tools)
        self.groups = {group: (purpose, tuple(name for name, tool in self.tools.items() if tool.kind.group == group))
                       for group, purpose in GROUP_PURPOSES.items()}
        self.served_groups = groups
        self.tools = {name: tool for name, tool in self.tools.items() if tool.kind.group in groups}

    def input_schemas(self) -> dict[str, dict[str, Any]]:
        """Each tool's input schema with the enums of the templates the store holds now (read
        again only when the store's own templates change)."""
        seen = vocabularies.signature(self.root)
        if self._vocabulary is None or self._vocabulary[0] != seen:
            vocab = vocabularies.vocabularies(vocabularies.held(self.root))
            self._vocabulary = (seen, {name: roles.with_roles(tool, vocabulary.with_enums(name, tool.input_schema, vocab),
                                                              self.roles) for name, tool in self.tools.items()})
        return self._vocabulary[1]

    @property
    def sd(self) -> Any:
        """The store, opened once and checked on every call: NOT_A_STORE (with the fix) where
        there is none, or it went away since, never a crash."""
        if self._sd is not None and not self._unchanged():
            self._sd = None  # gone, moved or edited since: open it again (or say why not)
        if self._sd is None:
            self._sd = self._open()
        return self._sd

    def _unchanged(self) -> bool:
        """The store's configuration is as it was opened, in a work tree still there."""
        store = self._sd.store
        try:
            return (store.worktree / ".git").exists() and (store.root / CONFIG).read_bytes() == self._config
        except OSError:
            return False

    def _open(self) -> Any:
        try:
            sd = self.host.open_store(self.root)
        except NotAStore as exc:
            if (self.root / CONFIG).is_file():
                raise  # a store's folder in no work tree (its repository gone): `init` would change nothing
            raise NotAStore(f"{exc.template}. Over MCP: call the tool `{served_tools.INIT}` to make a store at "
                            f"{self.root}, or restart the server with --store naming a store", hint=exc.hints,
                            **{**exc.details, "store": str(self.root), "fix": served_tools.INIT}) from None
        # without pygit2, or in a repository libgit2 cannot open (SHA-256), commits go through git
        places.in_process_git(sd)
        sd.roles_only = True  # a caller acts in the server's roles, never as one of the store's people
        self.root = sd.store.root
        self._config = (self.root / CONFIG).read_bytes()
        return sd

    def head(self) -> str | None:
        if self._sd is None:
            worktree = places.worktree_of(self.root) if self.root.is_dir() else None
            return places.head_at(worktree) if worktree is not None else None
        return places.head_at(self._sd.store.worktree)

    def refusal(self, exc: StatedirError, name: str | None = None,
                arguments: dict[str, Any] | None = None) -> Outcome:
        """A refusal as the CLI prints it with --json, in the tool's words (its next steps said
        from their data, the rest of the command line's words translated)."""
        exc.reword(McpWords(self.wording, name))
        return self._outcome(name, json.dumps(exc.as_json(), ensure_ascii=False, separators=(",", ":")), True,
                             exc.exit_code, arguments)

    def _outcome(self, name: str | None, text: str, is_error: bool, code: int,
                 arguments: dict[str, Any] | None = None) -> Outcome:
        """A result as the agent reads it: the command line's words in the tool's (messages,
        warnings), a refusal's moves those that fix it, and its structured content."""
        try:
            doc = json.loads(text) if text else None
        except ValueError:
            doc = None
        tool = self.tools.get(name or "")
        if is_error and isinstance(doc, dict) and tool is not None:
            doc = lean.role_fix(lean.refusal_moves(doc, tool.path[0], arguments or {}))
            doc = argument_named(doc, name or "", set(tool.input_schema.get("properties", {})))
        if isinstance(doc, dict) and {"error", "warning", "warnings", "blocked"} & set(doc):
            doc = lean.unserved_moves(worded(doc, lambda text: self.wording.say(text, name)), set(self.tools),
                                      {tool: group for group, (_, tools) in self.groups.items() for tool in tools})
        if isinstance(doc, dict) and (is_error or {"error", "warning", "warnings", "blocked"} & set(doc)):
            text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        return Outcome(text, is_error, self.head(), code, name or "", outputs.structured(name or "", text, is_error))

    def question(self, name: str, arguments: dict[str, Any] | None) -> Question | Outcome | None:
        """The user's question where this call would answer a MANDATORY checkpoint (the server
        asks it before the call runs); a refusal where the call is refused before that."""
        try:
            with _ONE_AT_A_TIME:
                return self._question(name, dict(arguments or {}))[0]
        except StatedirError as exc:
            return self.refusal(exc, name)

    def call(self, name: str, arguments: dict[str, Any] | None, answer: Answer | None = None,
             client: str | None = None) -> Outcome:
        """Run one tool call; `answer` is the user's, to the question `question()` gave; `client`
        the calling client (its Statedir-Client trailer on every commit the call makes)."""
        try:
            with _ONE_AT_A_TIME:
                if client is None or self._sd is None and name == served_tools.INIT:
                    return self._call(name, dict(arguments or {}), answer)
                store = self.sd.store
                before = store.trailers
                store.trailers = {**before, CLIENT: client}
                try:
                    return self._call(name, dict(arguments or {}), answer)
                finally:
                    store.trailers = before
        except StatedirError as exc:
            tool = self.tools.get(name)
            return self.refusal(races.told(self._sd, exc, tool.path if tool else (), answer), name, arguments)

    def _question(self, name: str, arguments: dict[str, Any]) -> tuple[Question | None, str | None]:
        """The question (None where the call answers no MANDATORY checkpoint) and the HEAD it was
        read at; the call's own refusals (its arguments, its expect_head) first."""
        tool = self.tools.get(name)
        if tool is None:
            raise InvalidValue(f"unknown tool {name!r}; this server serves {', '.join(self.tools)}", tool=name)
        if name == served_tools.INIT:
            tool.keywords(arguments, self.root)
            return None, None
        arguments = served_tools.prepare(tool, arguments, self.sd.store.worktree)
        try:  # a call its arguments refuse is refused before anyone is asked
            tool.keywords(arguments, self.root)
        except InvalidValue as exc:
            raise vocabulary.with_values(exc, self.input_schemas().get(name, {})) from None
        roles.acting(tool, arguments, self.roles)  # ... and one naming a role the server does not act in
        head = self.head()
        asks = users_answer.asks(tool, arguments)
        if asks is None or head is None:
            return None, None
        run_id, store = arguments["run_id"], self.sd.store
        if arguments.get(EXPECT_HEAD) is not None:  # no question on a run the agent did not see
            places.expect_unchanged(store, arguments[EXPECT_HEAD], store.run_dir(run_id))
        try:
            t, run, _ = self.sd.load(run_id)
        except StatedirError:  # an unknown run, a broken file: the command says so
            return None, None
        state = places.fingerprint(store, store.run_dir(run_id), head)
        question = asks(t, run, arguments, head, state)
        if question is not None:  # a server whose role may not carry the answer is refused before the user is asked
            users_answer.carried(t, run, tool, arguments, self.roles)
        return question, head

    def _call(self, name: str, arguments: dict[str, Any], answer: Answer | None) -> Outcome:
        question, seen = self._question(name, arguments)
        sd: Any = self._sd
        if answer is not None:
            arguments = answer.arguments(arguments)
            sd = users_answer.UsersAnswer(self.sd)
        elif question is not None:
            raise question.unaskable()
        elif self.tools[name].path in (("resolve",), ("acknowledge",), ("compliance",)) and seen is not None:
            # never the agent's own answer: refused by the rules (asked of the user where they take it)
            arguments[EXPECT_HEAD] = seen
        elif seen is not None:
            # only on the run as it was when found with no MANDATORY checkpoint open (the store checks, under its lock)
            arguments[EXPECT_HEAD] = seen
        tool = self.tools[name]
        if name != served_tools.INIT:
            arguments = served_tools.prepare(tool, roles.acting(tool, arguments, self.roles), self.sd.store.worktree)
        document = _invoke(tool, sd, tool.keywords(arguments, self.root), McpWords(self.wording, name))
        code = document.code
        text = served_tools.result_text(tool, document.text)
        # A non-zero exit is a failure unless the command printed its answer as a document
        # (prereq not met, validate with findings): that document is the result.
        failed = code != 0 and (is_error_document(text) or not is_document(text))
        if name == "show" and not failed and not (arguments.get(lean.WHOLE) or arguments.get("history")) \
                and arguments.get("format") != "ars":
            text = self._brief(text)
        return self._outcome(name, text, failed, code, arguments)

    def _brief(self, text: str) -> str:
        """`show`'s document in its short form, with the current stage's prerequisites."""
        doc = json.loads(text)
        prereq = None
        if isinstance(doc.get("current_stage"), str):
            with contextlib.suppress(StatedirError):
                prereq = self.sd.prereq(doc["run_id"], doc["current_stage"])
        return json.dumps(lean.brief_show(doc, prereq), ensure_ascii=False, separators=(",", ":"))


def _invoke(tool: Tool, sd: Any, keywords: dict[str, Any], words: McpWords) -> Document:
    """Call the API for the tool's command, as the command table names it; its document and exit
    code (a refusal raises StatedirError). Its refusals word the arguments as the command line
    does (`--topic`): the server says them in its tools' words; the next steps its messages and
    warnings name (statedir.hints) are said in them (`doctor {fix: true}`)."""
    store, _ = keywords.pop("store", None), keywords.pop("json", None)
    if tool.name == served_tools.INIT:
        keywords["store"] = store  # init makes the served store: no StateDir yet
    call = tool.command.call
    said = WORDS.set(words)
    try:
        with FlagWording():
            document: Document = (call if callable(call) else documents.call(call))(sd, **keywords)
    finally:
        WORDS.reset(said)
    for message in document.warnings:  # to the log, never the protocol's stdout
        if message not in _LOGGED:
            _LOGGED.add(message)
            sys.stderr.write(f"warning: {message}\n")
    return document

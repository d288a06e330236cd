"""statedir.hints: a refusal's next step is data on the exception (its command and arguments), its
message a template each entry point words in its own vocabulary (the Python API's by default)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import statedir
from statedir import api
from statedir.errors import GitError, InvalidValue, StatedirError, UnknownRun
from statedir.hints import DOCTOR_FIX, PYTHON, WORDS, Hint, Placeholder, Words, opt, said


class Shouting(Words):
    """An entry point of its own: the words differ, the data does not."""

    def hint(self, hint: Hint) -> str:
        return f"{hint.command.upper()}!{sorted(hint.args)}"

    def option(self, name: str) -> str:
        return f"<{name}>"


def test_a_hint_is_data_on_the_exception_and_in_its_json() -> None:
    exc = GitError("the merge driver is missing: run `{hint}`", hint=DOCTOR_FIX, file="x")
    assert exc.code == "GIT_ERROR" and exc.hints == (Hint("doctor", {"fix": True}),)
    assert exc.hints[0].command == "doctor" and exc.hints[0].args == {"fix": True}
    assert exc.template == "the merge driver is missing: run `{hint}`"
    assert exc.details == {"file": "x"}  # the hint is no detail a caller passes on
    assert exc.as_json()["error"]["details"] == {"file": "x", "hints": [{"command": "doctor", "args": {"fix": True}}]}
    assert GitError("plain").as_json()["error"]["details"] == {}  # no hint, no key


def test_the_python_api_words_are_the_default() -> None:
    exc = InvalidValue("say which with {opt:role}, or register it with {opt:files}; then `{hint}`",
                       hint=Hint("sync", {"replay": True, "remote": "origin"}))
    assert exc.message == ("say which with role=, or register it with files=; then "
                           "`sd.sync(replay=True, remote='origin')`")
    assert str(exc) == exc.message
    assert PYTHON.hint(Hint("people add", {"name": Placeholder("NAME")})) == "sd.add_person(name=NAME)"
    assert PYTHON.hint(Hint("init", {"branch": "b"})) == "statedir.init(branch='b')"
    assert PYTHON.hint(Hint("bus set", {"session": "s1", "field": Placeholder("f.NAME"), "value": Placeholder("V")})) \
        == "sd.bus('s1').set(field=f.NAME, value=V)"
    assert PYTHON.option("store") == "statedir.open()'s path" and PYTHON.option("start_run") == "start_run()"
    # `file=` is the one file of advisory, contract and new; `files=` material's list, both --file on the command line
    assert PYTHON.option("file") == "file=" and PYTHON.option("files") == "files="


def test_an_entry_point_words_the_same_data_its_own_way() -> None:
    token = WORDS.set(Shouting())
    try:
        exc = StatedirError("run `{hint}` then `{hint:2}` with {opt:file}", hint=[DOCTOR_FIX, Hint("sync")])
        warning = said("run `{hint}`", DOCTOR_FIX)
    finally:
        WORDS.reset(token)
    assert exc.message == "run `DOCTOR!['fix']` then `SYNC![]` with <file>" and warning == "run `DOCTOR!['fix']`"
    exc.reword(PYTHON)  # said again from the template, in other words
    assert exc.message == "run `sd.doctor(fix=True)` then `sd.sync()` with file=" and exc.args == (exc.message,)


def test_placeholders_without_a_hint_and_other_braces_stay() -> None:
    said = StatedirError("{hint} {hint:2} {x} {{y}}", hint=DOCTOR_FIX).message
    assert said == "sd.doctor(fix=True) {hint:2} {x} {{y}}"
    assert opt("file") == "{opt:file}" and StatedirError("no braces").message == "no braces"


def test_an_api_call_words_its_refusal_for_python(sd: api.StateDir) -> None:
    with pytest.raises(UnknownRun) as refused:
        sd.show("nope")
    assert refused.value.hints == (Hint("runs"),)
    assert refused.value.message == "no run 'nope' in this store; see `sd.runs()`"
    with pytest.raises(InvalidValue) as refused_role:
        sd.new("r1", topic="T", actor="someone", role="editor")
    message = refused_role.value.message
    assert message.startswith("role= names the role a person acts in, and this store lists no people ")
    assert "(`sd.add_person(name=NAME, roles=ROLE...)`): without them actor= names the role itself" in message


# What still holds the command line's words below the entry points, on purpose, each with why: what
# runs the command line or is read by git and pre-commit (never a caller's message), text stored in
# the history (a transition's summary is its commit subject and its log entry: the same whatever
# entry point made it), `templates NAME`'s description of a command's options, and the research
# ledger's refusals, whose flags are the original tool's contract (research-lab-skills' `state.py`).
_KEPT = {
    "statedir/gitops/hooks.py": (2, "the pre-commit and pre-push hooks: shell scripts"),
    "statedir/gitops/merge_driver_config.py": (1, "the merge driver's command line, in git's config"),
    "statedir/gitops/worktrees.py": (1, "a comment in a file written for git"),
    "statedir/store/layout.py": (1, ".gitattributes, a file written for git"),
    "statedir/store/steering.py": (1, "the store's .pre-commit-config.yaml, a file written for pre-commit"),
    "statedir/engine/checkpoint_dashboard.py": (1, "a held checkpoint's summary: a commit subject and log entry"),
    "statedir/engine/rules/checklist.py": (1, "a checklist's summary: a commit subject and log entry"),
    "statedir/history/people_check.py": (1, "a verify finding: remembered in verify's cache, whoever asked"),
    "statedir/merge/driver.py": (3, "the merge driver's own stderr (git runs it) and the conflict report it leaves "
                                    "in the file (read with git)"),
    "statedir/sync/refusal.py": (1, "the line the store's pre-push hook prints, looked for in git's output"),
    "statedir/research/chain.py": (3, "a refusal's `levels` detail: the ledger's flags, `state.py`'s contract"),
    "statedir/agents/__init__.py": (1, "the marker around what `agents --write` keeps in AGENTS.md, found again"),
    "statedir/api/research_call.py": (1, "a refusal's `flag` detail: the ledger's flags, `state.py`'s contract"),
    "statedir/engine/template/catalog.py": (4, "`templates NAME`: the options a template's vocabulary feeds"),
}


def _strings(tree: ast.AST) -> list[str]:
    """A module's string constants, its docstrings and git's own command lines aside."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", "")
            if name in ("run", "Popen", "with_identity", "check_output"):
                skip.update(id(sub) for sub in ast.walk(node))
        if isinstance(node, ast.List | ast.Tuple) and any(isinstance(e, ast.Constant) and e.value == "git"
                                                          for e in node.elts):
            skip.update(id(sub) for sub in ast.walk(node))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in skip]


# Below the entry points: the layers and the subsystems, and the API they serve (an entry point
# words the hints; a layer only names them).
_LAYERS = ("files", "gitops", "store", "engine", "views", "history", "sync", "merge", "bus", "research", "ars",
           "agents", "signing", "api")
# A git argument written whole (`--format=%H`, `--since=` before a date), never a message.
_GIT_ARGUMENT = re.compile(r"--[a-z][a-z-]*=\S*")


def _worded_as_the_command_line(root: Path) -> dict[str, int]:
    """Each module below the entry points with its messages that name a command line or a flag."""
    from statedir.cli import registry

    table = registry.command_table()
    names = "|".join(sorted({re.escape(c.path[0]) for c in table}, key=len, reverse=True))
    flags = {f for c in table for p in c.parameters for f in (*p.flags, *p.off_flags) if f.startswith("--")}
    command = re.compile(rf"\bstatedir ({names})\b(?!-)")
    flag = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)\b(?!-)")
    found: dict[str, int] = {}
    for layer in _LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            for text in _strings(ast.parse(path.read_text())):
                named = command.search(text) or (not text.lstrip().startswith("#") and "git " not in text
                                                 and not _GIT_ARGUMENT.fullmatch(text)
                                                 and any(f in flags for f in flag.findall(text)))
                if named:
                    rel = path.relative_to(root.parent).as_posix()
                    found[rel] = found.get(rel, 0) + 1
    return found


def test_the_layers_below_the_entry_points_write_no_command_line_words() -> None:
    """files ... api: a next step is a Hint, an option `{opt:NAME}` (issue 36); what is kept, is
    kept for a reason."""
    found = _worded_as_the_command_line(Path(statedir.__file__).parent)
    assert found == {path: count for path, (count, _) in _KEPT.items()}
    assert all(why for _, why in _KEPT.values())


def test_the_scan_finds_a_flag_and_a_command_in_a_message(tmp_path: Path) -> None:
    """The scan is not blind: a message naming `statedir doctor` or `--fix` is found, a docstring,
    a git command line and a placeholder are not."""
    (tmp_path / "statedir" / "store").mkdir(parents=True)
    (tmp_path / "statedir" / "store" / "m.py").write_text('''"""statedir doctor --fix in a docstring."""
A = "run `statedir doctor` first"
B = "pass --fix"
C = "--format=%H"
D = "{opt:fix}"
E = git.run(w, "log", "--reverse")
''')
    assert _worded_as_the_command_line(tmp_path / "statedir") == {"statedir/store/m.py": 2}

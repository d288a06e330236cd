"""statedir.hints: a refusal's next step is data on the exception (its command and arguments), its
message a template each entry point words in its own vocabulary (the Python API's by default)."""
from __future__ import annotations

import pytest

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
    exc = InvalidValue("say which with {opt:role}, or register it with {opt:file}; then `{hint}`",
                       hint=Hint("sync", {"replay": True, "remote": "origin"}))
    assert exc.message == ("say which with role=, or register it with files=; then "
                           "`sd.sync(replay=True, remote='origin')`")
    assert str(exc) == exc.message
    assert PYTHON.hint(Hint("people add", {"name": Placeholder("NAME")})) == "sd.add_person(name=NAME)"
    assert PYTHON.hint(Hint("init", {"branch": "b"})) == "statedir.init(branch='b')"
    assert PYTHON.option("store") == "statedir.open()'s path" and PYTHON.option("start_run") == "start_run()"


def test_an_entry_point_words_the_same_data_its_own_way() -> None:
    token = WORDS.set(Shouting())
    try:
        exc = StatedirError("run `{hint}` then `{hint:2}` with {opt:file}", hint=[DOCTOR_FIX, Hint("sync")])
        warning = said("run `{hint}`", DOCTOR_FIX)
    finally:
        WORDS.reset(token)
    assert exc.message == "run `DOCTOR!['fix']` then `SYNC![]` with <file>" and warning == "run `DOCTOR!['fix']`"
    exc.reword(PYTHON)  # said again from the template, in other words
    assert exc.message == "run `sd.doctor(fix=True)` then `sd.sync()` with files=" and exc.args == (exc.message,)


def test_placeholders_without_a_hint_and_other_braces_stay() -> None:
    assert StatedirError("{hint} {hint:2} {x} {{y}}", hint=DOCTOR_FIX).message == "sd.doctor(fix=True) {hint:2} {x} {{y}}"
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

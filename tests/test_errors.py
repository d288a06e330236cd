"""Errors are data: one plain class per error in one module per subsystem, each with its stable
`code` and exit class as class attributes, named as it is bound (a reader greps the name)."""
from __future__ import annotations

import inspect
from types import ModuleType

import pytest

import statedir
from statedir import errors
from statedir.bus import errors as bus_errors
from statedir.hints import DOCTOR_FIX
from tests.support.refusals import counted_words
from statedir.research import errors as research_errors

MODULES = [errors, bus_errors, research_errors]


def _classes(module: ModuleType) -> dict[str, type[errors.StatedirError]]:
    return {name: value for name, value in vars(module).items() if inspect.isclass(value)
            and issubclass(value, errors.StatedirError) and value.__module__ == module.__name__}


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_each_error_is_a_plain_class_named_as_it_is_bound_with_its_code_and_exit_class(module: ModuleType) -> None:
    found = _classes(module)
    assert found
    for name, cls in found.items():
        assert cls.__name__ == cls.__qualname__ == name
        if cls is not research_errors.UnknownEntity:  # the research kinds' common base has no code of its own
            assert "code" in vars(cls) and cls.code.isupper(), name
        assert cls.exit_code in (errors.REFUSED, errors.BAD_INPUT, errors.ENVIRONMENT), name


def test_the_codes_of_statedir_errors_are_each_one_error() -> None:
    codes = [cls.code for cls in _classes(errors).values()]
    assert len(codes) == len(set(codes))


def test_every_typed_error_is_importable_from_statedir_itself() -> None:
    for name, cls in _classes(errors).items():
        assert getattr(statedir, name) is cls and name in statedir.__all__, name
    assert statedir.WriteFailed.__name__ == "WriteFailed" and statedir.WriteFailed.code == "IO_ERROR"
    assert statedir.GitError.__name__ == "GitError"


def test_each_research_kind_has_its_error() -> None:
    assert {kind: cls.code for kind, cls in research_errors.UNKNOWN.items()} == {
        kind: f"UNKNOWN_{kind.upper()}" for kind in research_errors.UNKNOWN}
    assert all(issubclass(cls, research_errors.UnknownEntity) for cls in research_errors.UNKNOWN.values())


def test_a_message_is_worded_once_read_in_the_words_where_it_was_made() -> None:
    """A refusal caught and never read (`statedir next` and the flow check make hundreds of
    thousands) words nothing; read, it is worded once, in the words current where it was made."""
    with counted_words() as words:
        exc = errors.IllegalTransition("run `{hint}` with {opt:file}", hint=DOCTOR_FIX, stage="2")
    assert words.worded == []
    assert exc.message == "run `sd.doctor(fix=True)` with file=" == str(exc) and exc.args == (exc.message,)
    assert repr(exc) == f"IllegalTransition({exc.message!r})" and exc.template == "run `{hint}` with {opt:file}"
    assert exc.as_json() == {"error": {"code": "ILLEGAL_TRANSITION", "message": exc.message, "details": {
        "stage": "2", "hints": [{"command": "doctor", "args": {"fix": True}}]}}}
    assert words.worded == ["run `{hint}` with {opt:file}"]  # once, however often it is read

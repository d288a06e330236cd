"""Hostile session ids, fields and values: exit 1 or 2 with a clear message, never a
traceback, and a refused command leaves the repository byte-identical."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statedir import api
from tests.support.isolation import module_store
from tests.support.reliability import any_call
from tests.support.util import call, cli, snapshot

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated")]  # any arguments and texts, property-based

S = "2026-06-30-hostile"
NASTY = ["../x", "../../etc/passwd", "/etc/passwd", "..", ".", f"{S}/../../x", f"../{S}", f"{S}\x00",
         "x\x00y", "é", "\udcff", "-rf", "$(reboot)", "a" * 5000, "", " ", "\n", f"{S}\n", "%s%n", "C:\\x",
         "2026-06-30-" + "a" * 200, "bus/x", "phases..x", "phases.", ".phases", "--", "-", "\t", "\u202e"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with module_store(tmp_path_factory, "bus-hostile") as work:
        bus = api.StateDir(work / "state").bus(S)
        bus.set("phases.1-design.status", "done")
        bus.set("k", "v")
        yield work


@pytest.mark.parametrize("verb", ["init", "set", "append", "get", "clear"])
@pytest.mark.parametrize("session", NASTY)
def test_hostile_session_ids_are_invalid_ids(store: Path, verb: str, session: str) -> None:
    before = snapshot(store)
    args = ["bus", verb, session, *(["k", "v"] if verb in ("set", "append") else []), "--json",
            "--store", str(store / "state")]
    code, out, err = call(args)
    assert code == 2, (session, out, err)
    assert '"code":"INVALID_ID"' in out or '"code":"INVALID_VALUE"' in out, out
    assert "Traceback" not in out + err
    assert snapshot(store) == before
    assert not (store / "x").exists() and not (store.parent / "x").exists()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(verb=st.sampled_from(["init", "set", "append", "get", "clear"]),
       words=st.lists(st.one_of(st.sampled_from(NASTY), st.sampled_from(
           [S, "k", "phases.1-design.status", "todo", "--json", "--check-path", "--clean", "--actor", "--store"]),
           st.text(max_size=10)), max_size=5))
def test_any_arguments(store: Path, verb: str, words: list[str]) -> None:
    any_call(store, ["bus", verb, *words, "--store", str(store / "state")])


@pytest.mark.parametrize("field", ["k", "phases.1-design.agent"])
@pytest.mark.parametrize("value,code", [("x\x00y", 2), ("\udcff", 2), ("x" * ((1 << 20) + 1), 2)])
def test_values_the_bus_cannot_hold_are_refused(store: Path, field: str, value: str, code: int) -> None:
    before = snapshot(store)
    assert call(["bus", "set", S, field, value, "--store", str(store / "state")])[0] == code
    assert snapshot(store) == before


text_values = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=text_values)
def test_any_text_round_trips(store: Path, value: str) -> None:
    """Whatever text an agent stores, it reads back exactly (quotes, YAML words, control
    characters, right-to-left marks, leading dashes, trailing spaces)."""
    bus = api.StateDir(store / "state").bus(S)
    bus.set("value", value)
    bus.append("values", value)
    assert bus.get("value") == value and bus.get("values")[-1] == value


def test_a_large_value_through_the_real_cli(repo: Path) -> None:
    """Up to what one argv argument holds (128 KiB on Linux); the seed stores it too."""
    assert cli("init", cwd=repo).returncode == 0
    big = "line of a long user request\n" * 4000  # 112 KB
    assert cli("bus", "set", S, "user_request", big, cwd=repo).returncode == 0
    proc = cli("bus", "get", S, "user_request", cwd=repo)
    assert proc.returncode == 0 and proc.stdout == big + "\n"

"""The tests' isolation from the machine (tests/support/isolation.py): a pure test runs on the
session's own HOME, and the guard refuses a child process or an open that would reach any other."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.isolation import REAL_HOME, SESSION_PREFIX, Guard, Unisolated


def test_a_pure_test_sees_the_sessions_home_never_the_machines() -> None:
    home = os.environ["HOME"]
    assert SESSION_PREFIX in home and home != os.environ[REAL_HOME]
    assert os.environ["GIT_CONFIG_GLOBAL"] == str(Path(home) / ".gitconfig")
    assert os.environ["GIT_CONFIG_NOSYSTEM"] == "1"
    assert not Path.cwd().is_relative_to(Path(__file__).parents[1])  # nor the checkout as its folder


def test_an_isolated_test_has_a_home_of_its_own(isolated: Path) -> None:
    home = os.environ["HOME"]
    assert SESSION_PREFIX not in home and Path(home) == isolated.parent / "home"
    out = subprocess.run(["git", "config", "--global", "user.name"], capture_output=True, text=True, check=True)
    assert out.stdout == "Test User\n"  # the guard let it through: its HOME is the test's


@pytest.mark.parametrize("env", [None, {"HOME": "{real}", "GIT_CONFIG_GLOBAL": "{tmp}/home/.gitconfig"},
                                 {"HOME": "{tmp}/home", "GIT_CONFIG_GLOBAL": "{real}/.gitconfig"},
                                 {"HOME": "{tmp}/home", "XDG_CONFIG_HOME": "{real}/.config"}])
def test_a_child_with_the_sessions_or_the_machines_home_is_refused(tmp_path: Path, env: dict[str, str] | None) -> None:
    guard, real = Guard(str(tmp_path.parent)), os.environ[REAL_HOME]  # this test's temp folder among its roots
    guard.in_test = True
    given = None if env is None else {k: v.format(real=real, tmp=tmp_path) for k, v in env.items()}
    with pytest.raises(Unisolated):  # None: this pure test's environment, the session's HOME
        guard.audit("subprocess.Popen", (sys.executable, ["git", "status"], None, given))
    with pytest.raises(Unisolated):
        guard.audit("os.posix_spawn", ("git", ["git", "status"], given if given is not None else os.environ))
    assert len(guard.breaches) == 2
    for own in ({"HOME": str(tmp_path / "home"), "GIT_CONFIG_GLOBAL": os.devnull}, {"HOME": str(tmp_path / "home")},
                {"PATH": "/usr/bin:/bin"}):  # the test's own, or none at all: nothing of the machine's to read
        guard.audit("subprocess.Popen", (sys.executable, ["git", "status"], None, own))
    guard.in_test = False  # outside a test (collection, xdist's workers) only the machine's config is guarded
    guard.audit("subprocess.Popen", (sys.executable, ["git", "status"], None, given))
    assert len(guard.breaches) == 2


def test_opening_the_machines_git_config_is_refused() -> None:
    guard, real = Guard(None), Path(os.environ[REAL_HOME])
    for path in (real / ".gitconfig", real / ".config" / "git" / "config"):
        with pytest.raises(Unisolated):
            guard.audit("open", (str(path), "r", 0))
    guard.audit("open", (str(real / ".gitconfig.d"), "r", 0))  # a name that only begins alike
    guard.audit("open", (3, "r", 0))  # a descriptor: nothing to tell
    assert len(guard.breaches) == 2

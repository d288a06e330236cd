"""The tests kept off the machine's HOME and git config, and a guard that proves it.

Two nets. First, from the moment the test session configures (before any test module loads), HOME and
GIT_CONFIG_GLOBAL name a folder of the session's own with the tests' git identity (`session_home`):
what a test reads in-process without asking for isolation (libgit2 fixes its config search path from
HOME when first loaded) is never the machine's. Second, an audit hook (`Guard`): while a test runs,
every child process it starts (git, the CLI, pre-commit, a browser), through subprocess or
os.posix_spawn, must see HOME, GIT_CONFIG_GLOBAL and XDG_CONFIG_HOME, where it is given them, inside
the temp folder and not the session's shared folder, that is the test's own (`isolated`, `repo`,
`sd`) or its module's (`module_store`); and no open of the machine's ~/.gitconfig or ~/.config/git/
passes at any time. A breach is refused where it happens and fails the test's phase (setup, call or
teardown) even where the code under test caught the refusal.

Here too the isolation itself: `isolate` (what `isolated` and a module's `isolated_at` set) and
`module_store`, a module's own store and HOME."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from statedir import api

REAL_HOME = "STATEDIR_TESTS_REAL_HOME"  # the machine's HOME, as the first test process found it
SESSION_PREFIX = "statedir-tests-home-"  # a session's shared HOME: not a test's own
BROWSER_DRIVER = "/playwright/driver/node"  # the web tests' browser driver (playwright), started for a whole module
GITCONFIG = ("[user]\n\tname = Test User\n\temail = test@example.invalid\n"
             "[init]\n\tdefaultBranch = main\n\ttemplateDir =\n")
# What the machine's environment may hold that would steer a test's statedir or git.
CLEARED = ("STATEDIR_STORE", "STATEDIR_ACTOR", "STATEDIR_SIGNING_KEY", "STATEDIR_LOCK_TIMEOUT", "GIT_DIR",
           "GIT_INDEX_FILE", "ARS_PASSPORT_RESET", "PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF",
           "PRE_COMMIT_LOCAL_BRANCH", "XDG_CONFIG_HOME")


def write_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`home` (a new folder) made HOME, with the tests' git identity and config and nothing else."""
    home.mkdir()
    (home / ".gitconfig").write_text(GITCONFIG)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for var in CLEARED:
        monkeypatch.delenv(var, raising=False)


def session_home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session's shared HOME (a new temp folder) set in this process's environment, which the
    processes it starts (pytest-xdist's workers) inherit; the machine's HOME kept in REAL_HOME."""
    monkeypatch.setenv(REAL_HOME, os.environ.get(REAL_HOME) or str(Path.home()))
    home = Path(tempfile.mkdtemp(prefix=SESSION_PREFIX)) / "home"
    write_home(home, monkeypatch)
    return home


class Unisolated(BaseException):
    """A test reached the machine's HOME or git config (not an Exception: code under test that catches
    those still lets it through)."""


class Guard:
    """The audit hook: see the module's docstring."""

    def __init__(self, basetemp: str | None) -> None:
        real = Path(os.environ.get(REAL_HOME) or Path.home())
        self.home = os.path.join(str(real), "")
        self.machine_config = (str(real / ".gitconfig"), str(real / ".config" / "git") + os.sep)
        self.basetemp = basetemp
        self.roots: tuple[str, ...] | None = None  # the temp folders: read once a test runs (TMPDIR is set by then)
        self.in_test = False
        self.breaches: list[str] = []

    def install(self) -> None:
        sys.addaudithook(self.audit)

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":  # the most frequent event by far: most paths are let through by one comparison
            path = args[0]
            if path.__class__ is not str:
                if not isinstance(path, (bytes, os.PathLike)):
                    return  # a descriptor
                path = os.fsdecode(path)
            if path.startswith(self.home) and (path == self.machine_config[0] or
                                               path.startswith(self.machine_config[1])):
                self.breach(f"opened the machine's git config {path}")
        elif self.in_test and (event == "subprocess.Popen" or event == "os.posix_spawn"):
            self.child(args[1], args[3] if event == "subprocess.Popen" else args[2])

    def child(self, argv: Any, env: Mapping[Any, Any] | None) -> None:
        words = argv if isinstance(argv, (str, bytes)) else " ".join(map(os.fsdecode, argv))
        if os.fsdecode(words).split(" ", 1)[0].endswith(BROWSER_DRIVER):
            return  # playwright's driver and the browser it starts read no git config and write no store
        given = os.environ if env is None else env
        seen = {os.fsdecode(key): os.fsdecode(value) for key, value in given.items()}
        wrong = [f"{var}={seen[var]!r}" for var in ("HOME", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME")
                 if var in seen and not self.own(var, seen[var])]
        if wrong:
            self.breach(f"started {words!r} with {', '.join(wrong)}: not the test's own temp folder "
                        "(ask for the `isolated` fixture, or `repo`/`sd`, or a module's `module_store`)")

    def own(self, var: str, value: str) -> bool:
        """Whether a child's HOME, GIT_CONFIG_GLOBAL or XDG_CONFIG_HOME is the test's own: inside the
        temp folder, not the session's shared HOME (one left unset gives git nothing to read)."""
        if var == "GIT_CONFIG_GLOBAL" and value == os.devnull:
            return True
        if self.roots is None:
            roots = [tempfile.gettempdir(), *([self.basetemp] if self.basetemp else [])]
            self.roots = tuple(os.path.join(os.path.realpath(root), "") for root in roots)
        path = os.path.realpath(value)
        return path.startswith(self.roots) and SESSION_PREFIX not in path

    def breach(self, what: str) -> None:
        self.breaches.append(what)
        raise Unisolated(what)

    @contextlib.contextmanager
    def phase(self) -> Iterator[None]:
        """A test's setup, call or teardown: failed if it breached, even where the code under test
        caught the refusal (the breaches cleared either way: one phase's are not the next's)."""
        try:
            yield
        except BaseException:
            self.breaches.clear()
            raise
        if self.breaches:
            found, self.breaches[:] = list(self.breaches), []
            pytest.fail("the test is not isolated from the machine: " + "; ".join(found), pytrace=False)


# pip's cache of downloaded wheels, taken before any test moves HOME: pre-commit installs statedir's hook
# environment with pip, and a test's new HOME would make it download every dependency again.
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(Path(os.environ.get(REAL_HOME) or Path.home()) / ".cache" / "pip")


def isolate(root: Path, monkeypatch: pytest.MonkeyPatch, pre_commit_home: Path | None = None) -> None:
    """HOME at root/home with the tests' git identity and config; nothing from the real one. The
    caches that only save time are shared: pip's, and pre-commit's environments (`pre_commit_home`,
    one per test session: a hook's environment is built once, not once per test)."""
    write_home(root / "home", monkeypatch)
    monkeypatch.setenv("PIP_CACHE_DIR", PIP_CACHE)
    if pre_commit_home is not None:
        monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))


@contextlib.contextmanager
def isolated_at(root: Path) -> Iterator[pytest.MonkeyPatch]:
    """`isolate` at `root` (a new folder) for as long as the `with` lasts, what it set restored after:
    a module-scoped fixture's isolation (a test's own `isolated` comes only after it)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(root, monkeypatch)
        yield monkeypatch


@contextlib.contextmanager
def module_store(factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A store shared by one test module, in a repository with a HOME of its own: yields the work tree,
    HOME and git's config the module's while it lasts, and restores what it set when it ends (a
    module-scoped fixture's `with`)."""
    repo = factory.mktemp(name)
    with isolated_at(repo):
        subprocess.run(["git", "init", "-q", str(repo / "w")], check=True)
        api.init(repo / "w" / "state")
        yield repo / "w"

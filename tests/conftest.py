"""Fixtures: real git repositories in temp dirs, a fixed git identity, no use of the real home or cwd
(what the tests share that is not a fixture is tests/support's).

A test that touches git, the CLI or HOME asks for `isolated` (or `repo`, `sd`, which stand on it; a
folder whose every test does so has it autouse in its own conftest, a module with a `pytestmark`);
a pure test runs without. Whatever a test asks for, the session's own HOME stands in for the
machine's, and tests/support/isolation's guard fails a test whose child process would see any HOME
or git config but its own temp folder's. The signing tests (tests/store, tests/signing, tests/history and
a test of tests/gitops, tests/engine) share `bound`, a store binding two roles to SSH keys, and its `keys`."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from statedir import api

# Test modules cached once rewritten (pytest rewrites each one's asserts on import: about 6 CPU-seconds
# a process), whatever PYTHONDONTWRITEBYTECODE says: a second run, and each pytest-xdist worker after the
# first, loads them instead.
sys.dont_write_bytecode = False
# Plain help in this process as in the CLI's own: typer reads TYPER_USE_RICH once, when typer.core is
# first imported, and a test module that imports a CLI module before any `call` would otherwise make
# every later in-process `--help` come out boxed (the help checks then failed by test order).
os.environ.setdefault("TYPER_USE_RICH", "0")
# The shared helpers' asserts rewritten as the tests' own are (a failed one shows its values).
pytest.register_assert_rewrite("tests.support")

from tests.support.isolation import Guard, isolate, isolated_at, session_home  # noqa: E402 (after the two above)
from tests.support.signing import INTEGRITY, ORCH, as_, keygen  # noqa: E402
from tests.support.util import _LARGE_COPIES, ROOT, cli, copy_of  # noqa: E402

_SESSION = pytest.MonkeyPatch()  # what the session sets in its environment, undone when it ends
_HOME: list[Path] = []  # the session's own HOME (in a folder made for it)
_GUARD: list[Guard] = []


def pytest_configure(config: pytest.Config) -> None:
    """The tests' temporary folders in memory where the machine has room there: a transition fsyncs
    what it writes, and on a busy disk those waits, not the work, set the suite's pace (the fast
    subset took 126 s on this project's machine with them on disk, 67 s in /dev/shm). Only where
    nobody chose (no --basetemp, no TMPDIR) and /dev/shm is a tmpfs with 4 GiB free; the files are
    real files either way, and a test process's children (the CLI, git) inherit the choice.
    Then the session's own HOME set and the isolation guard installed (tests/support/isolation)."""
    _in_memory(config)
    _HOME.append(session_home(_SESSION))
    guard = Guard(config.option.basetemp)
    guard.install()
    _GUARD.append(guard)


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    _SESSION.undo()
    for home in _HOME:
        shutil.rmtree(home.parent, ignore_errors=True)


def _in_memory(config: pytest.Config) -> None:
    if config.option.basetemp or os.environ.get("TMPDIR") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    shm = Path("/dev/shm")
    try:
        stats = os.statvfs(shm)
        with open("/proc/mounts") as mounts:
            in_memory = any(line.split()[1:3] == [str(shm), "tmpfs"] for line in mounts)
    except OSError:
        return
    # (a tmpfs counts each hard link against its inodes: make_large's copies need room in both)
    roomy = stats.f_bavail * stats.f_frsize >= 4 << 30 and stats.f_favail >= 1_000_000
    if in_memory and os.access(shm, os.W_OK) and roomy:
        import tempfile

        os.environ["TMPDIR"] = str(shm)
        tempfile.tempdir = None  # read TMPDIR again


def pytest_sessionstart(session: pytest.Session) -> None:
    """statedir byte-compiled once, whatever PYTHONDONTWRITEBYTECODE says: the hundreds of CLI
    processes the tests start then load it instead of each compiling every module again."""
    import compileall

    compileall.compile_dir(str(ROOT / "statedir"), quiet=1)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _GUARD[0].in_test = True
    with _GUARD[0].phase():
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _GUARD[0].phase():
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    try:
        with _GUARD[0].phase():
            yield
    finally:
        _GUARD[0].in_test = False


@pytest.fixture(scope="session", autouse=True)
def _session_cwd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A pure test's cwd: a folder of the session's, never the checkout (`isolated` moves to the test's)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
        yield


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Git identity and config from the test alone; cwd and HOME inside the temp dir: what a test that
    touches git, the CLI or HOME asks for."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # every worker's (pre-commit locks it)
    isolate(tmp_path, monkeypatch, shared / "pre-commit-home")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def repo(isolated: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(isolated)], check=True)
    return isolated


@pytest.fixture
def sd(isolated: Path, tmp_path_factory: pytest.TempPathFactory) -> api.StateDir:
    """The test's own repository (its work dir) holding a new store, made by `init` once per test
    process and copied (copy_of, with nothing built in it)."""
    return copy_of("fresh", lambda _: None, isolated, tmp_path_factory)[0]


@pytest.fixture(autouse=True)
def _large_copies_removed() -> Iterator[None]:
    """Each test's copy of the large repository removed when the test ends: 14,000 links and an
    index of 1 MiB per test add up over a run's hundred (a tmpfs ran out of inodes keeping them)."""
    yield
    import shutil

    while _LARGE_COPIES:
        copy = _LARGE_COPIES.pop()
        shutil.rmtree(copy / "bulk", ignore_errors=True)
        shutil.rmtree(copy / ".git", ignore_errors=True)


@pytest.fixture(scope="module")
def bound_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once for each module of the signing tests (tests/store, tests/signing, tests/history):
    the keys of alice, bob and carol in keys/, and in work/ a repository whose store binds the
    orchestrator to alice's key and the integrity agent to bob's (through the CLI, as a user binds them)."""
    root = tmp_path_factory.mktemp("signed")
    repo = root / "work"
    with isolated_at(root):
        keygen(root / "keys", ("alice", "bob", "carol"))
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        api.init(repo / "state")
        proc = cli("signers", "add", ORCH, f"{root / 'keys' / 'alice'}.pub", "--actor", ORCH, cwd=repo,
                   env=as_(root / "keys" / "alice"))
        assert proc.returncode == 0, proc.stderr
        proc = cli("signers", "add", INTEGRITY, f"{root / 'keys' / 'bob'}.pub", "--actor", ORCH, cwd=repo,
                   env=as_(root / "keys" / "alice"))
        assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture
def keys(tmp_path: Path, bound_once: Path) -> dict[str, Path]:
    """Private key paths (the .pub beside each) of alice, bob and carol: the test's own copies (a
    module making its own keys has its own `keys`)."""
    import shutil

    shutil.copytree(bound_once / "keys", tmp_path / "keys")
    return {name: tmp_path / "keys" / name for name in ("alice", "bob", "carol")}


@pytest.fixture
def bound(repo: Path, keys: dict[str, Path], bound_once: Path) -> api.StateDir:
    """A store where the orchestrator is bound to alice's key and the integrity agent to bob's:
    bound_once's store copied into the test's repository."""
    import shutil

    shutil.copytree(bound_once / "work", repo, symlinks=True, dirs_exist_ok=True)
    return api.StateDir(repo / "state")

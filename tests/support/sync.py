"""Real clones of one bare remote on local disk, driven through the real CLI."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.support.util import cli, stage_by_hand  # noqa: F401 (the sync tests' too)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def cli_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """statedir in a clone; a failure other than the expected is the test's to assert."""
    return cli(*args, cwd=cwd)


def ok(cwd: Path, *args: str) -> dict[str, Any]:
    proc = cli(*args, "--json", cwd=cwd)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


CLOCK = Path(__file__).parent / "clock"


def frozen(when: str) -> dict[str, str]:
    """The environment of a CLI whose clock stands at UTC second `when`: the transition's time
    (tests/support/clock) and git's dates, so two machines act in the same second for sure."""
    return {"STATEDIR_TEST_NOW": when, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "PYTHONPATH": str(CLOCK)}


def ok_at(when: str, cwd: Path, *args: str) -> dict[str, Any]:
    """`ok`, with the clock standing at `when`."""
    proc = cli(*args, "--json", cwd=cwd, env=frozen(when))
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def second(offset: int = 0) -> str:
    """The current UTC second plus `offset` seconds, as statedir writes times."""
    import datetime

    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return (now + datetime.timedelta(seconds=offset)).strftime("%Y-%m-%dT%H:%M:%SZ")


def network(base: Path, names: tuple[str, ...] = ("a", "b", "c"), runs: tuple[str, ...] = ("r1",)) -> dict[str, Path]:
    """A bare remote and clones of it in `base`: the first made the store and its runs and
    pushed; the others cloned and registered the merge driver with `doctor --fix`. Built through
    the CLI once per test session for each (names, runs), in the session's temp dir beside
    `base`, and copied: each clone's origin then points at the copy's remote."""
    built = base.parent / ".networks" / f"{'-'.join(names)}_{'-'.join(runs)}"
    if not built.is_dir():
        making = built.with_name(f"{built.name}.making")
        shutil.rmtree(making, ignore_errors=True)
        making.mkdir(parents=True)
        _build(making, names, runs)
        making.rename(built)
    shutil.copytree(built, base, symlinks=True, dirs_exist_ok=True)
    for name in names:
        git(base / name, "remote", "set-url", "origin", str(base / "remote.git"))
    return {name: base / name for name in names}


def topics_apart(base: Path) -> dict[str, Path]:
    """Clones a and b of one remote: a retitles r1 and publishes it, b retitles it too and has
    not synced (the run-level conflict a merge refuses)."""
    c = network(base, ("a", "b"))
    ok(c["a"], "set", "r1", "topic", "topic A", "--reason", "from A")
    ok(c["a"], "sync")
    ok(c["b"], "set", "r1", "topic", "topic B", "--reason", "from B")
    return c


def _build(base: Path, names: tuple[str, ...], runs: tuple[str, ...]) -> None:
    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    first = base / names[0]
    subprocess.run(["git", "clone", "-q", str(remote), str(first)], check=True, capture_output=True)
    ok(first, "init")
    assert "merge-driver %O %A %B %P" in git(first, "config", "merge.statedir.driver")  # init registers it
    for run in runs:
        ok(first, "new", run, "--topic", f"topic of {run}")
    git(first, "push", "-q", "-u", "origin", "HEAD:main")
    for name in names[1:]:
        subprocess.run(["git", "clone", "-q", str(remote), str(base / name)], check=True, capture_output=True)
        assert cli_in(base / name, "doctor", "--fix").returncode == 0


def entries(clone: Path, run: str, log: str = "transitions") -> list[dict[str, Any]]:
    """A run's log entries as `statedir show` reads them."""
    from statedir.files import yaml

    folder = clone / "state" / "runs" / run / "history"
    files = [folder / f"{log}.yaml"] if (folder / f"{log}.yaml").is_file() else sorted((folder / log).glob("*.yaml"))
    out: list[dict[str, Any]] = []
    for path in files:
        out += yaml.to_plain(yaml.load(path.read_bytes(), str(path))) or []
    return out


def store_files(clone: Path) -> dict[str, bytes]:
    """Every committed store file at HEAD: path -> bytes."""
    names = git(clone, "ls-tree", "-r", "--name-only", "HEAD", "state").split("\n")
    return {n: subprocess.run(["git", "show", f"HEAD:{n}"], cwd=clone, capture_output=True, check=True).stdout
            for n in names if n}


def clean(clone: Path) -> None:
    """validate and verify both clean."""
    v = cli_in(clone, "validate")
    assert v.returncode == 0, v.stdout + v.stderr
    proc = cli("verify", "--json", cwd=clone)
    assert proc.returncode == 0 and json.loads(proc.stdout)["clean"], proc.stdout

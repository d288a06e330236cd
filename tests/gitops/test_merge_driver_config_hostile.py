"""What a collaborator with push access sends is data, never code: a `statedir/` package
committed at the repository's top is not imported by the merge driver git runs there."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.sync import cli_in, entries, git, network, ok

pytestmark = pytest.mark.usefixtures("isolated")  # every test here drives real clones through git and the CLI

PLANT = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\nraise SystemExit(0)\n"


def _plant(clone: Path, marker: Path) -> None:
    """A package named like statedir at the work tree's top, whose import leaves a marker."""
    package = clone / "statedir"
    package.mkdir()
    for name in ("__init__.py", "__main__.py"):
        (package / name).write_text(PLANT.format(marker=str(marker)))
    git(clone, "add", "statedir")
    git(clone, "commit", "-q", "-m", "a helpful package")


# Slow: three clones of one remote and their syncs (~1.4 CPU-s)
@pytest.mark.slow
def test_a_planted_statedir_package_never_runs_on_sync_or_plain_pull(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b", "c"))
    marker = tmp_path / "pwned"
    _plant(c["a"], marker)
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    ok(c["b"], "sync")  # the package arrives (git merges before it writes the work tree)
    git(c["c"], "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert (c["c"] / "statedir" / "__main__.py").is_file()
    ok(c["a"], "set", "r1", "topic", "from A", "--reason", "a1")
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    # b and c each change the same run: the merge of its files runs the driver in their work tree
    ok(c["b"], "set", "r1", "language", "de", "--reason", "b1")
    ok(c["c"], "set", "r1", "language", "de", "--reason", "c1")
    ok(c["b"], "sync")
    pull = subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"], cwd=c["c"],
                          capture_output=True, text=True)
    assert not marker.exists(), "the merge driver imported the work tree's statedir/ package"
    assert pull.returncode == 0, pull.stderr
    for clone, mine in ((c["b"], "b1"), (c["c"], "c1")):
        reasons = [e.get("reason") for e in entries(clone, "r1")]
        assert "a1" in reasons and mine in reasons  # the driver did merge (both entries kept)


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_an_old_registration_without_isolated_mode_is_replaced(tmp_path: Path) -> None:
    c = network(tmp_path, ("a",))
    import sys

    old = f"{sys.executable} -m statedir merge-driver %O %A %B %P"
    git(c["a"], "config", "merge.statedir.driver", old)
    assert cli_in(c["a"], "status", "r1").returncode == 0
    assert git(c["a"], "config", "merge.statedir.driver").split()[1:4] == ["-I", "-m", "statedir"]

"""A user's own `git add` + `git commit` beside statedir's writers never takes the store's files.

`git commit` reads the index before it takes `index.lock` and writes what it read back under the
lock; statedir holds the lock until every such git running since before it changed the index is
done (statedir.gitops.index_readers), so none writes the store's old entries back for the user's
next commit to take.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from statedir import api
from tests.support.reliability import git
from tests.support.util import make_large

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git and the CLI

WRITER = ("import statedir\nsd = statedir.open('state')\n"
          "for i in range(6):\n    sd.set('p1', 'topic', f'w{w}v{{i}}', reason='r')\nprint('done')")


@pytest.mark.slow  # 50 rounds, each 3 writers beside the user's commits in a repository with a 1 MiB index
@pytest.mark.parametrize("round_", range(50))
def test_a_users_git_add_and_commit_never_take_the_stores_files(repo: Path, round_: int) -> None:
    make_large(repo)
    api.init(repo / "state")
    api.StateDir(repo / "state").new("p1", topic="x")
    (repo / "user.txt").write_text("start\n")
    git(repo, "add", "user.txt")
    git(repo, "commit", "-q", "-m", "user start")
    writers = [subprocess.Popen([sys.executable, "-c", WRITER.format(w=w)], cwd=repo, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for w in range(3)]
    n = 0
    while any(w.poll() is None for w in writers):
        (repo / "user.txt").write_text(f"{n}\n")
        subprocess.run(["git", "add", "user.txt"], cwd=repo, capture_output=True)
        # a commit that meets statedir's index lock fails, as beside any other git, and is tried again
        n += subprocess.run(["git", "commit", "-q", "-m", f"user {n}"], cwd=repo, capture_output=True).returncode == 0
    for w in writers:
        out, err = w.communicate()
        assert out.strip() == "done", err  # a transition refused (UNCOMMITTED_EDIT) would show here
    for line in git(repo, "log", "--format=%H %s").splitlines():
        sha, subject = line.split(" ", 1)
        if subject.startswith("user"):
            assert git(repo, "show", "--format=", "--name-only", sha).split() in (["user.txt"], []), subject
    log = api.StateDir(repo / "state").histories("p1")["transitions"]
    assert [e["action"] for e in log] == ["new"] + ["set"] * 18

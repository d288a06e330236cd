"""The repository's git config and refs as statedir reads them from the files (a no-op sync's
branch, upstream, remote URL, remote-tracking ref): where the files answer, the answer is git's;
where they cannot, git is asked, and the answer is git's too."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import config_file, git

KEYS = ["branch.main.remote", "branch.main.merge", "remote.origin.url", "Remote.origin.URL", "branch.Main.remote",
        "core.bare", "branch.main.statedirVerified"]
# Config files a user or git itself may leave: plain ones the file answers, and the forms (quotes,
# escapes, comments, includes, other spellings, booleans, repeated keys) that must go to git.
SECTIONS = [
    "",
    '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n[remote "origin"]\n\turl = /srv/r.git\n',
    '[branch "main"]\n  remote=up  \n\tmerge = refs/heads/trunk\n',
    '[branch "main"]\n\tremote = a\n\tremote = b\n',
    '[Branch "main"]\n\tRemote = origin\n',
    '[branch "Main"]\n\tremote = other\n',
    '[branch "main"]\n\tremote =\n',
    '[branch "main"]\n\tremote = a\tb  c\n',
    '[branch "main"]\n\tremote = "quoted"\n',
    '[branch "main"]\n\tremote = origin # a comment\n',
    '[branch "main"]\n\tremote = origin ; a comment\n',
    '[branch "main"]\n\tremote = a \\\n b\n',
    '[branch.main]\n\tremote = legacy\n',
    '[branch "main"]\n\tremote = origin\n[include]\n\tpath = extra\n',
    '[branch "main"] remote = inline\n',
    '[branch "main"]\n\tremote\n',
    '[remote "origin"]\n\turl = /srv/one.git\n\turl = /srv/two.git\n',
    '[branch "main"]\n\tstatedirVerified = 0123456789abcdef0123456789abcdef01234567\n',
    '# [branch "main"]\n;\tremote = x\n',
    '[extensions]\n\tworktreeConfig = true\n[branch "main"]\n\tremote = origin\n',
]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


@pytest.mark.parametrize("section", SECTIONS)
def test_a_key_read_from_the_file_is_what_git_config_prints(repo: Path, section: str) -> None:
    (repo / ".git" / "extra").write_text('[branch "main"]\n\tremote = from-include\n')
    with (Path(os.environ["HOME"]) / ".gitconfig").open("a") as home:  # outranked by the repository's file
        home.write('[branch "main"]\n\tmerge = refs/heads/from-home\n[remote "origin"]\n\turl = /from-home\n')
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + section)
    values = config_file.read(repo)
    for key in KEYS:
        proc = _git(repo, "config", "--get", key)
        assert proc.returncode in (0, 1), proc.stderr  # a config git cannot read is not one of these
        found = config_file.get(values, key)
        assert found is config_file.ASK or found == proc.stdout.strip(), (key, section)
        assert config_file.value(repo, key) == (proc.stdout.strip() or None), (key, section)


def test_statedirs_own_keys_are_read_from_the_file_alone_and_the_environment_outranks_it(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + '[branch "main"]\n\tremote = origin\n')
    values = config_file.read(repo)
    assert config_file.get(values, "branch.main.statedirVerified", own=True) is None  # not set: no git asked
    assert config_file.get(values, "branch.main.merge") is config_file.ASK  # git's own: the user's file may set it
    assert config_file.get(values, "branch.main.remote") == "origin"
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")  # `git -c branch.main.remote=...` outranks the file
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "branch.main.remote")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "elsewhere")
    assert config_file.read(repo) is None and config_file.value(repo, "branch.main.remote") == "elsewhere"


def test_refs_are_read_loose_packed_or_from_git_as_git_reads_them(repo: Path) -> None:
    assert git.head_branch(repo) in ("main", "master")  # unborn: the branch HEAD names all the same
    _git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    first = _git(repo, "rev-parse", "HEAD").stdout.strip()
    branch = _git(repo, "symbolic-ref", "--short", "HEAD").stdout.strip()
    _git(repo, "update-ref", "refs/remotes/origin/main", first)
    assert git.ref_commit(repo, "refs/remotes/origin/main") == first and git.head_branch(repo) == branch
    _git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/remotes/origin/main").exists()
    assert git.ref_commit(repo, "refs/remotes/origin/main") == first == git.head(repo)
    _git(repo, "commit", "-q", "--allow-empty", "-m", "two")  # loose again, over the packed one
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    second = _git(repo, "rev-parse", "HEAD").stdout.strip()
    assert git.ref_commit(repo, "refs/remotes/origin/main") == second == git.head(repo) != first
    assert git.ref_commit(repo, "refs/remotes/origin/gone") is None
    _git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")  # a symbolic ref: git says
    assert git.ref_commit(repo, "refs/remotes/origin/HEAD") == second
    _git(repo, "checkout", "-q", "--detach")
    assert git.head_branch(repo) is False

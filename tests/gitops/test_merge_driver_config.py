"""The merge driver's registration as statedir reads it: from the repository's config file where
that is certain, else from git; either way the value `git config --get` prints."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import merge_driver_config

PLAIN = "/usr/bin/python3 -I -m statedir merge-driver %O %A %B %P"
UNSAFE = "python3 -m statedir merge-driver %O %A %B %P"
# Config files a user or a tool may leave: plain registrations the file answers, and the forms
# (quotes, escapes, comments, includes, other spellings of the section) that must go to git.
SECTIONS = [
    "",
    f'[merge "statedir"]\n\tname = n\n\tdriver = {PLAIN}\n',
    f'[merge "statedir"]\n  driver={UNSAFE}  \n',
    f'[merge "statedir"]\n\tdriver = {PLAIN}\n\tdriver = {UNSAFE}\n',
    f'[merge "statedir"]\n\tDriver = {PLAIN}\n',
    '[merge "statedir"]\n\tdriver =\n',
    '[merge "statedir"]\n\tdriver = a\tb  c\n',
    '[merge "statedir"]\n\tname = n\n',
    f'[merge "statedir"]\n\tdriver = "{PLAIN}"\n',
    f'[merge "statedir"]\n\tdriver = {PLAIN} # a comment\n',
    f'[merge "statedir"]\n\tdriver = {PLAIN} ; a comment\n',
    '[merge "statedir"]\n\tdriver = a \\\n b\n',
    '[merge "statedir"]\n\tname = x \\\n\tdriver = y\n',
    f'[merge "statedir"]\n\tdriver = {PLAIN}\n[merge "other"]\n\tdriver = other\n',
    '[merge "other"]\n\tdriver = other\n',
    f'[MERGE "statedir"]\n\tdriver = {UNSAFE}\n',
    f'[merge "statedir"]\n\tdriver = {PLAIN}\n[Merge "statedir"]\n\tdriver = {UNSAFE}\n',
    f'[merge.statedir]\n\tdriver = {UNSAFE}\n',
    f'[merge "statedir"]\n\tdriver = {PLAIN}\n[include]\n\tpath = extra\n',
    f'[merge "statedir"] driver = {UNSAFE}\n',
    f'[merge "statedir"]\n\tdriver = {PLAIN}\n',
    '[merge "statedir"]\n\tdriver\n',
    '# [merge "statedir"]\n;\tdriver = x\n',
]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


@pytest.mark.parametrize("section", SECTIONS)
def test_the_registration_read_is_what_git_config_prints(repo: Path, section: str) -> None:
    (repo / ".git" / "extra").write_text(f'[merge "statedir"]\n\tdriver = {UNSAFE} from-include\n')
    with (Path(os.environ["HOME"]) / ".gitconfig").open("a") as home:  # outranked by the repository's file
        home.write('[merge "statedir"]\n\tdriver = from-home\n')
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + section)
    proc = _git(repo, "config", "--get", "merge.statedir.driver")
    assert proc.returncode in (0, 1), proc.stderr  # a config git cannot read is not one of these
    assert merge_driver_config.configured(repo) == (proc.stdout.strip() or None)


def test_a_plain_registration_is_read_without_git_and_a_command_line_config_with_it(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + f'[merge "statedir"]\n\tdriver = {PLAIN}\n')
    assert merge_driver_config._set_plainly(config.read_text()) == PLAIN
    included = config.read_text().replace("[core]", "[include]\n[core]")
    assert merge_driver_config._set_plainly(included) is merge_driver_config._ASK_GIT
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")  # `git -c merge.statedir.driver=...` outranks the file
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "merge.statedir.driver")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", UNSAFE)
    assert merge_driver_config.configured(repo) == UNSAFE

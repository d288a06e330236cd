"""`git init` through GitPython, the one place a command needs a repository object: importing
GitPython costs about as much as a commit, so only the commands that make a repository load this
module (store creation, `init --branch`)."""
from __future__ import annotations

from pathlib import Path

from git import Repo
from git.exc import GitError as GitPythonError

from statedir.errors import GitError


def init(directory: Path) -> Path:
    try:
        Repo.init(directory, mkdir=True)
    except (GitPythonError, OSError) as exc:
        raise GitError(f"git init {directory} failed: {' '.join(str(exc).split())[:200]}") from None
    return directory

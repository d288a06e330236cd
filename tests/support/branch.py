"""A store on a branch of its own (`init --branch`): the branch's name, git in a folder, and a user's
repository with work of its own (a commit, a staged change and an unstaged one), and one with a remote."""
from __future__ import annotations

import subprocess
from pathlib import Path

B = "statedir-state"


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0 or not check, (args, proc.stderr)
    return proc.stdout.strip()


def user_repo(repo: Path) -> Path:
    """A repository on `main` with a commit, a staged change and an unstaged one."""
    (repo / "notes.md").write_text("mine\n")
    (repo / ".gitignore").write_text("/.ai_log/*\n")
    git(repo, "add", "notes.md", ".gitignore")
    git(repo, "commit", "-q", "-m", "the user's work")
    (repo / "staged.md").write_text("staged\n")
    git(repo, "add", "staged.md")
    (repo / "notes.md").write_text("mine, edited\n")
    return repo


def with_remote(repo: Path, remote: Path, push: bool = True) -> Path:
    """`repo` made a user_repo whose origin is a new bare repository at `remote`, its `main` pushed
    there unless `push` is false: returns the remote."""
    git(remote.parent, "init", "-q", "--bare", str(remote))
    user_repo(repo)
    git(repo, "remote", "add", "origin", str(remote))
    if push:
        git(repo, "push", "-q", "origin", "main")
    return remote

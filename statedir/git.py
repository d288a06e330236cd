"""Git for statedir: commits built in a private index, and the audit log read back.

The transition path drives the git binary directly (one short process per step) rather than
through GitPython, whose import alone costs about as much as a commit; GitPython is used
where a command needs a repository object and speed does not matter (`init`).
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from statedir.errors import GitError

TRAILERS = ("Statedir-Run", "Statedir-Actor", "Statedir-Action")
# State commits are ours alone: no user hooks, no signing prompts, no auto-gc pauses.
_QUIET = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
          "-c", "core.quotepath=false")
_FALLBACK_IDENTITY = {"GIT_COMMITTER_NAME": "statedir", "GIT_COMMITTER_EMAIL": "statedir@localhost"}


def run(worktree: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run one git command in `worktree`; a failure is GIT_ERROR with git's own words."""
    try:
        proc = subprocess.run(["git", *_QUIET, *args], cwd=worktree, input=stdin, capture_output=True,
                              env={**os.environ, **env} if env else None, check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    if check and proc.returncode != 0:
        words = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {words[-1] if words else proc.returncode}",
                       command=["git", *args], stderr=proc.stderr.decode(errors="replace"))
    return proc


def find_worktree(start: Path) -> Path | None:
    """The top of the git work tree holding `start`, found without starting git."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def init(directory: Path) -> Path:
    from git import Repo  # GitPython: only `init` needs a repository object

    Repo.init(directory)
    return directory


def head(worktree: Path) -> str | None:
    proc = run(worktree, "rev-parse", "-q", "--verify", "HEAD", check=False)
    return proc.stdout.decode().strip() or None


def show(worktree: Path, rev: str, path: str) -> bytes | None:
    """A file's bytes at `rev`, or None where it does not exist there."""
    proc = run(worktree, "cat-file", "blob", f"{rev}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def message(summary: str, run_id: str, actor: str, action: str) -> str:
    lines = " ".join(summary.split())
    return (f"{lines}\n\nStatedir-Run: {run_id}\nStatedir-Actor: {actor}\n"
            f"Statedir-Action: {action}\n")


def commit(worktree: Path, paths: list[str], text: str, *, author: str | None = None) -> str:
    """Commit exactly `paths` (worktree-relative, added, changed or deleted) on top of HEAD.

    A private index starts from HEAD, so nothing the user staged or left unstaged is swept
    in; afterwards the user's index is brought up to date for these paths only.
    """
    git_dir = Path(run(worktree, "rev-parse", "--git-dir").stdout.decode().strip())
    git_dir = git_dir if git_dir.is_absolute() else worktree / git_dir
    fd, index = tempfile.mkstemp(prefix="statedir-index-", dir=git_dir)
    os.close(fd)
    os.unlink(index)
    env = {"GIT_INDEX_FILE": index}
    if author:
        env.update(GIT_AUTHOR_NAME=author, GIT_AUTHOR_EMAIL=f"{author}@statedir.invalid")
    try:
        if head(worktree):
            run(worktree, "read-tree", "HEAD", env=env)
        listing = "".join(f"{p}\0" for p in paths).encode()
        run(worktree, "update-index", "--add", "--remove", "-z", "--stdin", env=env, stdin=listing)
        args = ("commit", "-q", "--no-verify", "--allow-empty", "-F", "-")
        proc = run(worktree, *args, env=env, stdin=text.encode(), check=False)
        if proc.returncode != 0 and b"tell me who you are" in proc.stderr + proc.stdout:
            proc = run(worktree, *args, env={**env, **_FALLBACK_IDENTITY}, stdin=text.encode(), check=False)
        if proc.returncode != 0:
            words = (proc.stderr or proc.stdout).decode(errors="replace").strip().splitlines()
            raise GitError(f"git commit failed: {words[-1] if words else proc.returncode}")
    finally:
        for leftover in (index, index + ".lock"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    sha = head(worktree)
    sync_index(worktree, paths)
    assert sha is not None
    return sha


def sync_index(worktree: Path, paths: list[str]) -> None:
    """Make the user's index agree with the work tree for statedir's own paths."""
    listing = "".join(f"{p}\0" for p in paths).encode()
    run(worktree, "update-index", "--add", "--remove", "-z", "--stdin", stdin=listing)


def restore(worktree: Path, paths: list[str]) -> None:
    """Put `paths` back as HEAD has them (deleting those HEAD lacks); index included."""
    rev = head(worktree)
    for rel in paths:
        blob = show(worktree, rev, rel) if rev else None
        target = worktree / rel
        if blob is None:
            if target.exists() or target.is_symlink():
                target.unlink()
            for parent in target.parents:  # directories the transition created, now empty
                if parent == worktree or any(parent.iterdir()):
                    break
                parent.rmdir()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob)
    if rev:
        run(worktree, "reset", "-q", "--", *paths, check=False)


_FIELDS = ("%H", "%cI", "%(trailers:key=Statedir-Run,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Actor,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Action,valueonly,separator=%x2C)", "%s")


def log(worktree: Path, pathspec: str) -> list[dict[str, str]]:
    """State commits touching `pathspec`, newest first, read from their trailers."""
    if not head(worktree):
        return []
    fmt = "%x1f".join(_FIELDS) + "%x1e"
    out = run(worktree, "log", f"--format={fmt}", "--", pathspec).stdout.decode(errors="replace")
    entries = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != len(_FIELDS) or not fields[2]:
            continue
        sha, time, run_id, actor, action, summary = fields
        entries.append({"commit": sha, "time": time, "actor": actor, "action": action,
                        "run_id": run_id, "summary": summary})
    return entries

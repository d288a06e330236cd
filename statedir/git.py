"""Git for statedir: commits built in a private index, and the audit log read back.

The transition path drives the git binary directly (one short process per step) rather than
through GitPython, whose import alone costs about as much as a commit; GitPython is used
where a command needs a repository object and speed does not matter (`init`).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from statedir.errors import GitError

TRAILERS = ("Statedir-Run", "Statedir-Actor", "Statedir-Action")
# State commits are ours alone: no user hooks, no signing prompts, no auto-gc pauses.
_QUIET = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
          "-c", "core.quotepath=false")
_FALLBACK_IDENTITY = {"GIT_COMMITTER_NAME": "statedir", "GIT_COMMITTER_EMAIL": "statedir@localhost"}


LOCK_RETRY_SECONDS = 5.0


def run(worktree: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run one git command in `worktree`; a failure is GIT_ERROR with git's own words.

    A command that finds a lock of git's taken (the user's own git is writing the index or
    a ref) is tried again for a few seconds before that counts as a failure.
    """
    import time

    deadline = time.monotonic() + LOCK_RETRY_SECONDS
    delay = 0.01
    while True:
        try:
            proc = subprocess.run(["git", *_QUIET, *args], cwd=worktree, input=stdin, capture_output=True,
                                  env={**os.environ, **env} if env else None, check=False)
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror}") from None
        contended = proc.returncode != 0 and b".lock': File exists" in proc.stderr
        if not contended or time.monotonic() >= deadline:
            break
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    if check and proc.returncode != 0:
        raise GitError(f"git {next(a for a in args if not a.startswith('-'))} failed: {_gist(proc.stderr)}",
                       command=["git", *args], stderr=proc.stderr.decode(errors="replace"))
    return proc


def _gist(stderr: bytes) -> str:
    """git's own reason: its first fatal/error line, else its last line."""
    lines = stderr.decode(errors="replace").strip().splitlines()
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (reasons or lines or ["no message"])[0 if reasons else -1]


def find_worktree(start: Path) -> Path | None:
    """The top of the git work tree holding `start`, found without starting git."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def init(directory: Path) -> Path:
    from git import Repo  # GitPython: only `init` needs a repository object
    from git.exc import GitError as GitPythonError

    try:
        Repo.init(directory, mkdir=True)
    except (GitPythonError, OSError) as exc:
        raise GitError(f"git init {directory} failed: {' '.join(str(exc).split())[:200]}") from None
    return directory


def git_dir(worktree: Path) -> Path:
    """The repository's git directory (`.git`, or where a `.git` file points)."""
    dot = worktree / ".git"
    if dot.is_dir():
        return dot
    text = dot.read_text(encoding="utf-8", errors="replace").strip()
    if text.startswith("gitdir:"):
        path = Path(text[7:].strip())
        return path if path.is_absolute() else (worktree / path).resolve()
    return Path(run(worktree, "rev-parse", "--absolute-git-dir").stdout.decode().strip())


def head(worktree: Path) -> str | None:
    """HEAD's commit, read from the ref files where that is plain; git answers otherwise."""
    gitdir = git_dir(worktree)
    try:
        content = (gitdir / "HEAD").read_text().strip()
        if content.startswith("ref: "):
            loose = gitdir / content[5:]
            if loose.is_file():
                content = loose.read_text().strip()
        if len(content) == 40 and all(c in "0123456789abcdef" for c in content):
            return content
    except OSError:
        pass
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


# Above this size of the user's index, `git commit` (which lstat()s every tracked file to refresh
# the index) costs more than building the commit with plumbing that touches no work tree.
PLUMBING_INDEX_BYTES = 1 << 20


def commit(worktree: Path, paths: list[str], text: str, *, author: str | None = None,
           index_key: str = "default", plumbing_above: int = PLUMBING_INDEX_BYTES,
           created: list[str] | None = None) -> str:
    """Commit exactly `paths` (worktree-relative, added, changed or deleted) on top of HEAD;
    `created` are those HEAD does not have yet (default: any of them may be new).

    Nothing the user staged or left unstaged elsewhere is swept in, and afterwards the
    user's index agrees with HEAD for these paths. In a small repository `git commit --only`
    does all of it in one process (it builds the commit in a temporary index of its own,
    from HEAD plus these paths); in a large one, where that command's index refresh would
    lstat() every tracked file, the commit is built with plumbing in statedir's own index.
    """
    env = {"GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": f"{author}@statedir.invalid"} if author else {}
    parent = head(worktree)
    sha: str | None
    user_index = git_dir(worktree) / "index"
    if parent is None or (user_index.is_file() and user_index.stat().st_size > plumbing_above):
        sha = _commit_private(worktree, paths, text, env, parent, index_key)
    else:
        new = paths if created is None else created
        if new:  # `commit --only` takes only paths the index knows
            update_index(worktree, new)
        _fault("during_commit")
        _with_identity(worktree, ("--literal-pathspecs", "commit", "-q", "--no-verify", "--allow-empty",
                                  "--only", "-F", "-", "--", *paths), env, text)
        sha = head(worktree)
    if sha is None or sha == parent:
        raise GitError("git commit did not move HEAD")
    return sha


def _fault(name: str) -> None:
    from statedir import faults

    faults.point(name)


def _commit_private(worktree: Path, paths: list[str], text: str, env: dict[str, str], parent: str | None,
                    index_key: str) -> str:
    """Plumbing in a private index that mirrors HEAD (reused while HEAD is the commit it
    mirrors): write-tree, commit-tree, compare-and-swap update-ref; then the user's index."""
    gitdir = git_dir(worktree)
    (gitdir / "statedir").mkdir(exist_ok=True)
    index = gitdir / "statedir" / f"index-{index_key}"
    mirrors = index.with_name(index.name + ".head")
    # A split index: each commit rewrites a small delta, not an entry per tracked file.
    env = {**env, "GIT_INDEX_FILE": str(index), "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.splitIndex",
           "GIT_CONFIG_VALUE_0": "true"}
    try:
        fresh = index.is_file() and mirrors.read_text().strip() == parent
    except OSError:
        fresh = False
    mirrors.unlink(missing_ok=True)
    if not fresh:
        index.unlink(missing_ok=True)
    try:
        try:
            if parent and not fresh:
                run(worktree, "read-tree", parent, env=env)
            update_index(worktree, paths, env=env)
        except GitError:
            if not fresh:
                raise
            # The reused index is unreadable (disposable, so rebuilt from HEAD once).
            index.unlink(missing_ok=True)
            run(worktree, "read-tree", parent or "--empty", env=env)
            update_index(worktree, paths, env=env)
        _fault("during_commit")
        tree = run(worktree, "write-tree", env=env).stdout.decode().strip()
        sha = _with_identity(worktree, ("commit-tree", tree, *(("-p", parent) if parent else ()), "-F", "-"),
                             env, text)
        # Compare-and-swap: a HEAD that moved meanwhile fails the update instead of losing a commit.
        run(worktree, "update-ref", "-m", f"commit: {text.splitlines()[0]}", "HEAD", sha, parent or "0" * 40)
    except GitError:
        index.unlink(missing_ok=True)
        raise
    mirrors.write_text(sha)
    # Best effort: the commit has landed; if the user's own git holds the index lock, their
    # `git status` shows the store's files as changed until the next statedir command.
    update_index(worktree, paths, check=False)
    return sha


def _with_identity(worktree: Path, args: tuple[str, ...], env: dict[str, str], text: str) -> str:
    """Run a committing command; without a configured identity, commit as statedir."""
    proc = run(worktree, *args, env=env, stdin=text.encode(), check=False)
    if proc.returncode != 0 and b"tell me who you are" in proc.stderr + proc.stdout:
        proc = run(worktree, *args, env={**env, **_FALLBACK_IDENTITY}, stdin=text.encode(), check=False)
    if proc.returncode != 0:
        command = next(a for a in args if not a.startswith("-"))
        raise GitError(f"git {command} failed: {_gist(proc.stderr or proc.stdout)}")
    return proc.stdout.decode().strip()


def update_index(worktree: Path, paths: list[str], *, env: dict[str, str] | None = None,
                 check: bool = True) -> None:
    """Bring an index (the user's, or GIT_INDEX_FILE's in `env`) to the work tree for `paths`:
    added, changed or removed."""
    listing = "".join(f"{p}\0" for p in paths).encode()
    run(worktree, "update-index", "--add", "--remove", "-z", "--stdin", env=env, stdin=listing, check=check)


def settle(worktree: Path, index_key: str, timeout: float = 10.0) -> None:
    """Wait for git processes a killed writer left running (SIGKILL does not reach its
    children): its commit may still land, and rolling back must see where HEAD ends up."""
    import time

    gitdir = git_dir(worktree)
    locks = [gitdir / "statedir" / f"index-{index_key}.lock", gitdir / "index.lock", gitdir / "HEAD.lock"]
    time.sleep(0.05)  # a git the writer had just started may not hold its lock yet
    deadline = time.monotonic() + timeout
    while any(lock.exists() for lock in locks) and time.monotonic() < deadline:
        time.sleep(0.01)
    private = locks[0]
    if private.exists():  # its git died too: the lock is ours to clear, and the index to rebuild
        private.unlink(missing_ok=True)
        (gitdir / "statedir" / f"index-{index_key}").unlink(missing_ok=True)


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
                if parent == worktree:
                    break
                if parent.is_dir():
                    if any(parent.iterdir()):
                        break
                    parent.rmdir()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob)
    # Died after its commit, before the user's index caught up? Then bring the index along.
    if rev and run(worktree, "diff", "--cached", "--quiet", rev, "--", *paths, check=False).returncode:
        run(worktree, "reset", "-q", "--", *paths, check=False)


_FIELDS = ("%H", "%cI", "%(trailers:key=Statedir-Run,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Actor,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Action,valueonly,separator=%x2C)", "%s")


def _utc(iso: str) -> str:
    import datetime

    when = datetime.datetime.fromisoformat(iso).astimezone(datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


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
        entries.append({"commit": sha, "time": _utc(time), "actor": actor, "action": action,
                        "run_id": run_id, "summary": summary})
    return entries

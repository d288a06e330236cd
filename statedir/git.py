"""Git for statedir: commits of exactly the store's changed files, and the audit log read back.

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
# State commits are ours alone: no user hooks, no signing prompts, no auto-gc or auto-maintenance
# (`git commit` would start `git maintenance run --auto`, a process per commit).
_QUIET = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
          "-c", "maintenance.auto=false", "-c", "core.quotepath=false")
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
            else:  # packed by `git gc` (or by a commit that started an auto gc)
                content = _packed_ref(gitdir, content[5:]) or content
        if len(content) == 40 and all(c in "0123456789abcdef" for c in content):
            return content
    except OSError:
        pass
    proc = run(worktree, "rev-parse", "-q", "--verify", "HEAD", check=False)
    return proc.stdout.decode().strip() or None


def _packed_ref(gitdir: Path, ref: str) -> str | None:
    """A ref's commit from `packed-refs`, or None."""
    try:
        lines = (gitdir / "packed-refs").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


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
           plumbing_above: int = PLUMBING_INDEX_BYTES, created: list[str] | None = None) -> str:
    """Commit exactly `paths` (worktree-relative, added, changed or deleted) on top of HEAD;
    `created` are those HEAD does not have yet (default: any of them may be new).

    Nothing the user staged or left unstaged elsewhere is swept in, and afterwards the
    user's index agrees with HEAD for these paths. In a small repository `git commit --only`
    does all of it in one process (it builds the commit in a temporary index of its own,
    from HEAD plus these paths); in a large one, where that command's index refresh would
    lstat() every tracked file, the commit is built with plumbing from the trees on the
    changed paths alone.
    """
    env = {"GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": f"{author}@statedir.invalid"} if author else {}
    parent = head(worktree)
    sha: str | None
    user_index = git_dir(worktree) / "index"
    if parent is None or (user_index.is_file() and user_index.stat().st_size > plumbing_above):
        sha = _commit_trees(worktree, paths, text, env, parent)
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


def _commit_trees(worktree: Path, paths: list[str], text: str, env: dict[str, str], parent: str | None) -> str:
    """Plumbing that reads no index: the changed files are hashed, only the trees on their
    paths are rebuilt from the parent's (one directory listing each, never every tracked
    file), then commit-tree and a compare-and-swap update-ref; then the user's index."""
    present = [p for p in paths if (worktree / p).is_file()]  # the others are deleted
    hashed = run(worktree, "hash-object", "-w", "--", *present).stdout.decode().split() if present else []
    # directory -> name -> (mode, type, object id); "" is the root
    files: dict[str, dict[str, tuple[str, str, str]]] = {}
    for rel, oid in zip(present, hashed, strict=True):
        executable = (worktree / rel).stat().st_mode & 0o100
        directory, _, name = rel.rpartition("/")
        files.setdefault(directory, {})[name] = ("100755" if executable else "100644", "blob", oid)
    for rel in set(paths) - set(present):
        directory, _, name = rel.rpartition("/")
        files.setdefault(directory, {})[name] = ("", "", "")  # removed
    dirs = {""}
    for directory in files:
        parts = directory.split("/") if directory else []
        dirs.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    ordered = sorted(dirs, key=lambda d: (-d.count("/") - (d != ""), d))  # deepest first, root last
    _fault("during_commit")
    for attempt in range(3):
        trees = _read_trees(worktree, parent, ordered) if parent else {d: {} for d in ordered}
        root = _write_trees(worktree, ordered, trees, files)
        sha = _with_identity(worktree, ("commit-tree", root, *(("-p", parent) if parent else ()), "-F", "-"), env,
                             text)
        # Compare-and-swap: a HEAD that moved meanwhile (the user's own commit) fails the
        # update instead of being lost, and the commit is rebuilt on top of it.
        moved = run(worktree, "update-ref", "-m", f"commit: {text.splitlines()[0]}", "HEAD", sha,
                    parent or "0" * 40, check=attempt == 2)
        if moved.returncode == 0:
            break
        parent = head(worktree)
    # Best effort: the commit has landed; if the user's own git holds the index lock, their
    # `git status` shows the store's files as changed until the next statedir command.
    update_index(worktree, paths, check=False)
    return sha


def _read_trees(worktree: Path, rev: str, dirs: list[str]) -> dict[str, dict[str, tuple[str, str, str]]]:
    """The listings of `dirs` at `rev`, in one `cat-file --batch` (a missing one is empty)."""
    import re

    query = "".join(f"{rev}:{d}\n" if d else f"{rev}^{{tree}}\n" for d in dirs).encode()
    out = run(worktree, "cat-file", "--batch", stdin=query).stdout
    trees: dict[str, dict[str, tuple[str, str, str]]] = {}
    pos = 0
    for directory in dirs:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        pos = eol + 1
        listing: dict[str, tuple[str, str, str]] = {}
        if header[-1] != b"missing":
            size = int(header[2])
            raw, pos = out[pos:pos + size], pos + size + 1
            if header[1] == b"tree":
                width = len(header[0]) // 2  # SHA-1 or SHA-256 object ids
                entry = re.compile(rb"(\d+) ([^\0]+)\0(.{%d})" % width, re.DOTALL)
                for match in entry.finditer(raw):
                    mode = match[1].decode()
                    listing[match[2].decode("utf-8", "surrogateescape")] = (
                        mode, "tree" if mode == "40000" else "commit" if mode == "160000" else "blob", match[3].hex())
        trees[directory] = listing
    return trees


def _write_trees(worktree: Path, ordered: list[str], trees: dict[str, dict[str, tuple[str, str, str]]],
                 files: dict[str, dict[str, tuple[str, str, str]]]) -> str:
    """Write the changed trees, deepest first, through one `git mktree --batch` (which sorts
    and checks each listing); returns the new root tree."""
    proc = subprocess.Popen(["git", *_QUIET, "mktree", "-z", "--missing", "--batch"], cwd=worktree,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    written: dict[str, str | None] = {}
    try:
        for directory in ordered:
            listing = trees[directory]
            listing.update(files.get(directory, {}))
            for sub, oid in written.items():  # this directory's children, written just before
                parent_dir, _, name = sub.rpartition("/")
                if sub and parent_dir == directory:
                    listing[name] = ("040000", "tree", oid) if oid else ("", "", "")
            entries = [f"{mode} {kind} {oid}\t{name}\0" for name, (mode, kind, oid) in listing.items() if mode]
            if not entries and directory:
                written[directory] = None  # an emptied directory leaves its parent
                continue
            proc.stdin.write("".join(entries).encode("utf-8", "surrogateescape") + b"\0")
            proc.stdin.flush()
            written[directory] = proc.stdout.readline().decode().strip()
        _, stderr = proc.communicate()
    except (OSError, ValueError):
        proc.kill()
        proc.wait()
        raise GitError("git mktree failed: it stopped reading") from None
    root = written.get("")
    if proc.returncode != 0 or not root or any(v == "" for v in written.values()):
        raise GitError(f"git mktree failed: {_gist(stderr)}")
    return root


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


def settle(worktree: Path, timeout: float = 10.0) -> None:
    """Wait for git processes a killed writer left running (SIGKILL does not reach its
    children): its commit may still land, and rolling back must see where HEAD ends up."""
    import time

    gitdir = git_dir(worktree)
    locks = [gitdir / "index.lock", gitdir / "HEAD.lock"]
    time.sleep(0.05)  # a git the writer had just started may not hold its lock yet
    deadline = time.monotonic() + timeout
    while any(lock.exists() for lock in locks) and time.monotonic() < deadline:
        time.sleep(0.01)


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


_FIELDS = ("%H", "%cd", "%(trailers:key=Statedir-Run,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Actor,valueonly,separator=%x2C)",
           "%(trailers:key=Statedir-Action,valueonly,separator=%x2C)", "%s")
UTC_DATE = "--date=format-local:%Y-%m-%dT%H:%M:%SZ"  # with TZ=UTC: git writes the times in UTC


def log(worktree: Path, pathspec: str) -> list[dict[str, str]]:
    """State commits touching `pathspec`, newest first, read from their trailers."""
    if not head(worktree):
        return []
    fmt = "%x1f".join(_FIELDS) + "%x1e"
    out = run(worktree, "log", UTC_DATE, f"--format={fmt}", "--", pathspec, env={"TZ": "UTC"}).stdout.decode(
        errors="replace")
    entries = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != len(_FIELDS) or not fields[2]:
            continue
        sha, time, run_id, actor, action, summary = fields
        entries.append({"commit": sha, "time": time, "actor": actor, "action": action,
                        "run_id": run_id, "summary": summary})
    return entries

"""Git for statedir: running git in the store's repository, where its git directory and HEAD are,
what a write must refuse (a redirecting variable, an operation in progress), blobs, the index.
A state commit's message and the log read back from it are `statedir.gitops.commit_message`.

The transition path drives the git binary directly (one short process per step) rather than
through GitPython, whose import alone costs about as much as a commit; GitPython is used
where a command needs a repository object and speed does not matter (`init`, in
`statedir.gitops.repository_init`).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from statedir.errors import GitError
from statedir.gitops import process, ref_files
from statedir.gitops.git_options import IN_PROGRESS, QUIET, REDIRECTS  # noqa: F401 (git.IN_PROGRESS: the callers')

LOCK_RETRY_SECONDS = 5.0


def environment(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in REDIRECTS}
    env.update(extra or {})
    return env


def run(worktree: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None,
        check: bool = True) -> process.Completed:
    """Run one git command in `worktree`; a failure is GIT_ERROR with git's own words.

    A command that finds a lock of git's taken (the user's own git is writing the index or
    a ref) is tried again for a few seconds before that counts as a failure.
    """
    deadline = time.monotonic() + LOCK_RETRY_SECONDS
    delay = 0.01
    while True:
        try:
            proc = process.run(["git", *QUIET, *args], str(worktree), environment(env), stdin)
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror}") from None
        contended = proc.returncode != 0 and b".lock': File exists" in proc.stderr
        if not contended or time.monotonic() >= deadline:
            break
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    if check and proc.returncode != 0:
        raise GitError(f"git {next(a for a in args if not a.startswith('-'))} failed: {gist(proc.stderr)}",
                       command=["git", *args], stderr=proc.stderr.decode(errors="replace"))
    return proc


def gist(stderr: bytes) -> str:
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


def common_dir(gitdir: Path) -> Path:
    """Where a repository's shared parts (objects, refs, config) are: a linked work tree's git
    directory names it in `commondir`; any other git directory is its own."""
    pointer = gitdir / "commondir"
    if pointer.is_file():
        return (gitdir / pointer.read_text().strip()).resolve()
    return gitdir


def head(worktree: Path) -> str | None:
    """HEAD's commit, read from the ref files where that is plain; git answers otherwise."""
    gitdir = git_dir(worktree)
    try:
        content = (gitdir / "HEAD").read_text().strip()
        if content.startswith("ref: "):  # a linked work tree keeps its HEAD, the branches are shared
            content = ref_files.commit(str(common_dir(gitdir)), content[5:]) or content
        if ref_files.object_id(content):
            return content
    except OSError:
        pass
    proc = run(worktree, "rev-parse", "-q", "--verify", "HEAD", check=False)
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and proc.stderr.strip()):
        raise GitError(f"git rev-parse failed: {gist(proc.stderr)}", stderr=proc.stderr.decode(errors="replace"))
    return proc.stdout.decode().strip() or None


def head_branch(worktree: Path) -> str | None | bool:
    """The branch HEAD names (`main` of `ref: refs/heads/main`, born or not), False on a
    detached HEAD, None where the HEAD file does not say plainly (ask git)."""
    try:
        content = (git_dir(worktree) / "HEAD").read_text().strip()
    except OSError:
        return None
    if content.startswith("ref: refs/heads/") and len(content) > 16 and content.isprintable():
        return content[16:]
    return False if ref_files.object_id(content) else None


def ref_commit(worktree: Path, ref: str) -> str | None:
    """The commit a branch's or remote-tracking branch's full ref name (`refs/remotes/origin/main`)
    points at: read from the ref files where they name an object (git writes only commits
    there), else asked of git (None: no such ref)."""
    try:
        found = ref_files.commit(str(common_dir(git_dir(worktree))), ref)
    except OSError:
        found = None
    if found is not None:
        return found
    proc = run(worktree, "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def preflight(worktree: Path) -> list[str]:
    """Before a write: refuse where a commit would land somewhere the user does not expect;
    returns warnings for people (a detached HEAD)."""
    gitdir = git_dir(worktree)
    for var in REDIRECTS:
        value = os.environ.get(var)
        if value is None:
            continue
        same = {"GIT_DIR": gitdir, "GIT_WORK_TREE": worktree, "GIT_INDEX_FILE": gitdir / "index"}.get(var)
        if same is not None and (worktree / value).resolve() == same.resolve():
            continue  # it names this very repository: harmless, and removed from every git call
        raise GitError(f"{var} is set ({value}); statedir commits only to the repository that holds the "
                       f"store ({worktree}). Unset it: `env -u {var} statedir ...`", variable=var)
    for marker, operation in IN_PROGRESS:
        if (gitdir / marker).exists():
            raise GitError(f"{operation} is in progress in {worktree}; a state commit now would be part of it "
                           "(and lost on --abort). Finish or abort it first, then retry", operation=marker)
    try:
        detached = not (gitdir / "HEAD").read_text().startswith("ref: ")
    except OSError:
        detached = False
    return ["HEAD is detached: this commit is on no branch; `git switch -c NAME` keeps it"] if detached else []


def blob_ids(worktree: Path, rev: str | None, paths: list[str]) -> dict[str, tuple[str, int] | None]:
    """Each path's blob id and size at `rev` (None where it has no such file), in one git."""
    if rev is None or not paths:
        return dict.fromkeys(paths)
    query = "".join(f"{rev}:{p}\n" for p in paths).encode()
    lines = run(worktree, "cat-file", "--batch-check", stdin=query).stdout.decode().splitlines()
    out: dict[str, tuple[str, int] | None] = {}
    for path, line in zip(paths, lines, strict=True):
        fields = line.split()
        out[path] = (fields[0], int(fields[2])) if len(fields) == 3 and fields[1] == "blob" else None
    return out


def landed(worktree: Path, before: str | None, text: str) -> bool:
    """Whether a commit with message `text` was made on top of `before` (HEAD then)."""
    now = head(worktree)
    if now is None or now == before:
        return False
    span = f"{before}..{now}" if before else now
    out = run(worktree, "log", "-z", "--format=%B", "-n", "100", span).stdout.decode(errors="replace")
    return any(m.strip() == text.strip() for m in out.split("\0"))


def untracked(worktree: Path, paths: list[str]) -> list[str]:
    """The repository-relative `paths` git does not track (in no commit's tree and not added): a
    clone would not hold them."""
    if not paths:
        return []
    held = run(worktree, "ls-files", "-z", "--", *(f":(literal){p}" for p in paths)).stdout.split(b"\0")
    tracked = {os.fsdecode(p) for p in held if p}
    return [p for p in paths if p not in tracked]


def index_identity(worktree: Path) -> list[int] | None:
    """Which file the user's index is now (inode, mtime, size): git replaces it on every write."""
    try:
        st = (git_dir(worktree) / "index").stat()
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_mtime_ns, st.st_size]


def reset_index(worktree: Path, paths: list[str]) -> None:
    """Bring the user's index to HEAD for `paths` (after a transition died mid-commit)."""
    if not paths:
        return
    rev = head(worktree)
    if rev is None:
        args: tuple[str, ...] = ("rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", *paths)
    else:
        differs = run(worktree, "--literal-pathspecs", "diff", "--cached", "--quiet", rev, "--", *paths, check=False)
        if differs.returncode == 0:
            return
        if differs.returncode != 1:
            raise GitError(f"git diff failed: {gist(differs.stderr)}")
        args = ("reset", "-q", rev, "--", *paths)
    proc = run(worktree, "--literal-pathspecs", *args, check=False)
    if proc.returncode != 0:
        lock = git_dir(worktree) / "index.lock"
        raise GitError(f"the index does not match HEAD for the store and git cannot fix it ({gist(proc.stderr)}). "
                       f"If no git command is running: `rm -f '{lock}'`, then run any statedir command",
                       command=["git", *args])


def update_index(worktree: Path, paths: list[str], *, env: dict[str, str] | None = None,
                 check: bool = True) -> None:
    """Bring an index (the user's, or GIT_INDEX_FILE's in `env`) to the work tree for `paths`:
    added, changed or removed."""
    listing = "".join(f"{p}\0" for p in paths).encode()
    run(worktree, "update-index", "--add", "--remove", "-z", "--stdin", env=env, stdin=listing, check=check)

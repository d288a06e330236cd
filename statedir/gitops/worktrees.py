"""Linked work trees for a store on a branch of its own: which branch each work tree has checked
out, a new one on an orphan branch, the user's `info/exclude`, and the binding in git's config."""
from __future__ import annotations

from pathlib import Path

from statedir import hints
from statedir.errors import GitError
from statedir.gitops import git

BRANCH_KEY = "statedir.branch"  # the repository's config: the store's branch ...
STORE_KEY = "statedir.store"  # ... and where its linked work tree is (relative to the main work tree)


def valid_branch_name(worktree: Path, name: str) -> bool:
    """Whether git takes `name` as a branch name as it is (no `@{-1}` expansion, no option)."""
    if not name or name.startswith("-") or "@{" in name or name in ("HEAD", "@") or len(name) > 200 \
            or any(c < " " or c == "\x7f" for c in name):  # git would refuse a control character; a NUL, Python
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are no text (from a command line): no name to record in the config
        return False
    proc = git.run(worktree, "check-ref-format", "--branch", name, check=False)
    return proc.returncode == 0 and proc.stdout.decode().strip() == name


def current_branch(worktree: Path) -> str | None:
    """The branch `worktree` has checked out (born or not); None on a detached HEAD."""
    proc = git.run(worktree, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def checked_out(worktree: Path) -> dict[str, Path]:
    """Each branch checked out in some work tree of the repository -> that work tree's path."""
    out = git.run(worktree, "worktree", "list", "--porcelain", "-z").stdout.decode("utf-8", "surrogateescape")
    found: dict[str, Path] = {}
    path: Path | None = None
    for field in out.split("\0"):
        if field.startswith("worktree "):
            path = Path(field[len("worktree "):])
        elif field.startswith("branch refs/heads/") and path is not None:
            found[field[len("branch refs/heads/"):]] = path
    return found


def commit_of(worktree: Path, ref: str) -> str | None:
    proc = git.run(worktree, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def remote_branches(worktree: Path, name: str) -> list[str]:
    """The remote-tracking branches named `name` (`origin/NAME` first)."""
    out = git.run(worktree, "for-each-ref", "--format=%(refname:short)", f"refs/remotes/*/{name}").stdout.decode()
    refs = [line for line in out.splitlines() if line.split("/", 1)[1:] == [name]]
    return sorted(refs, key=lambda ref: (ref != f"origin/{name}", ref))


def remote_stores(worktree: Path, config: str) -> list[str]:
    """The branches (`statedir-state`, as `init --branch` takes them) that a remote-tracking ref
    holds with `config` at its root, `origin`'s first: a store on a branch of its own, pushed
    from another clone. One git process, however many refs; the current branch's name left out
    (its store is the one checked out)."""
    out = git.run(worktree, "for-each-ref", "--format=%(refname)", "refs/remotes/").stdout.decode()
    refs = [ref for ref in out.splitlines() if ref.count("/") >= 3 and not ref.endswith("/HEAD")]
    if not refs:
        return []
    asked = "".join(f"{ref}:{config}\n" for ref in refs).encode()
    answers = git.run(worktree, "cat-file", "--batch-check", stdin=asked, check=False).stdout.decode().splitlines()
    current = current_branch(worktree)
    found: list[tuple[bool, str]] = []
    for ref, answer in zip(refs, answers, strict=False):  # git answers one line per ref asked
        name = ref.split("/", 3)[3]
        if answer.split(" ")[1:2] == ["blob"] and name != current:
            found.append((not ref.startswith("refs/remotes/origin/"), name))
    return list(dict.fromkeys(name for _, name in sorted(found)))


def fetch_remote_branch(worktree: Path, name: str) -> tuple[str | None, list[str]]:
    """Branch `name` on a remote (`origin` first) that has not been fetched, fetched now: (its
    remote-tracking ref, or None; a warning for each remote that could not be asked)."""
    out = git.run(worktree, "remote").stdout.decode().split()
    warnings: list[str] = []
    quiet = {"GIT_TERMINAL_PROMPT": "0"}  # an https remote asking for a password is one that cannot be asked
    for remote in sorted(out, key=lambda r: (r != "origin", r)):
        heads = git.run(worktree, "ls-remote", "--heads", remote, f"refs/heads/{name}", env=quiet, check=False)
        if heads.returncode != 0:
            warnings.append(f"could not ask remote {remote} for branch {name} ({git.gist(heads.stderr)}); "
                            f"if it holds the store, fetch it and run `{hints.said(hints.HINT, hints.Hint('init', {'branch': name}))}` "
                            "again (docs/branch.md)")
            continue
        if f"\trefs/heads/{name}" not in heads.stdout.decode():
            continue
        ref = f"refs/remotes/{remote}/{name}"
        git.run(worktree, "fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{name}:{ref}", env=quiet)
        return f"{remote}/{name}", warnings
    return None, warnings


def forget(worktree: Path, ref: str) -> None:
    git.run(worktree, "update-ref", "-d", ref, check=False)


def holds_file(worktree: Path, rev: str, path: str) -> bool:
    return git.run(worktree, "cat-file", "-e", f"{rev}:{path}", check=False).returncode == 0


def add_orphan(worktree: Path, directory: Path, branch: str) -> None:
    """A linked work tree at `directory` on the unborn branch `branch`: nothing checked out, an
    empty index. (git before 2.42 has no `worktree add --orphan`: the work tree is made detached
    on a commit of the empty tree, which no ref keeps, and its HEAD then names the branch.)"""
    empty_tree = git.run(worktree, "hash-object", "-t", "tree", "-w", "--stdin", stdin=b"").stdout.decode().strip()
    anchor = git.run(worktree, "commit-tree", empty_tree, "-m", "statedir: an anchor for a new work tree",
                     env=_IDENTITY).stdout.decode().strip()
    git.run(worktree, "worktree", "add", "--quiet", "--detach", "--no-checkout", str(directory), anchor)
    git.run(directory, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
    git.run(directory, "read-tree", "--empty")


def add_existing(worktree: Path, directory: Path, branch: str, remote_ref: str | None) -> None:
    """A linked work tree at `directory` with `branch` checked out: the local branch, or (where
    only a remote has it) a new local branch tracking `remote_ref`."""
    if remote_ref is None:
        git.run(worktree, "worktree", "add", "--quiet", str(directory), branch)
    else:
        git.run(worktree, "worktree", "add", "--quiet", "--track", "-b", branch, str(directory), remote_ref)


def remove(worktree: Path, directory: Path) -> None:
    """Undo `add_*` after a failure: the work tree's registration goes (its files are the caller's)."""
    git.run(worktree, "worktree", "remove", "--force", "--force", str(directory), check=False)
    git.run(worktree, "worktree", "prune", check=False)


def prune(worktree: Path) -> None:
    """Forget work trees whose directories are gone (git's own `worktree prune`)."""
    git.run(worktree, "worktree", "prune")


def main_worktree(worktree: Path) -> Path:
    """The repository's main work tree (where `.git` is), from any of its work trees."""
    common = git.common_dir(git.git_dir(worktree))
    return common.parent if common.name == ".git" else worktree


def exclude(worktree: Path, directory: Path) -> bool:
    """List `directory` in the repository's `info/exclude` (git's own, never committed) where it
    is inside `worktree`, so the user's `git status` and `git add -A` pass over it; False where
    it was listed already or is outside."""
    try:
        rel = directory.relative_to(worktree).as_posix()
    except ValueError:
        return False
    path = git.common_dir(git.git_dir(worktree)) / "info" / "exclude"
    line = f"/{_escaped(rel)}/"
    try:
        text = path.read_text()
    except FileNotFoundError:
        text = ""
    if line in text.splitlines():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(("" if not text or text.endswith("\n") else "\n")
                  + f"# statedir: the store's own branch is checked out here (statedir init --branch)\n{line}\n")
    return True


def _escaped(rel: str) -> str:
    """A path as a literal gitignore pattern."""
    return "".join(f"\\{c}" if c in "*?[]\\!#" else c for c in rel).replace(" ", "\\ ")


def bind(worktree: Path, directory: Path, branch: str) -> None:
    """Record in the repository's config which branch holds the store and where it is checked out."""
    main = main_worktree(worktree)
    try:
        where = directory.relative_to(main).as_posix()
    except ValueError:
        where = str(directory)
    git.run(worktree, "config", BRANCH_KEY, branch)
    git.run(worktree, "config", STORE_KEY, where)


def binding(worktree: Path) -> tuple[str, Path] | None:
    """(branch, work tree path) recorded by `bind`, or None."""
    try:
        out = git.run(worktree, "config", "--get-regexp", r"^statedir\.(branch|store)$", check=False)
    except GitError:
        return None
    values = dict(line.split(" ", 1) for line in out.stdout.decode().splitlines() if " " in line)
    branch, where = values.get(BRANCH_KEY), values.get(STORE_KEY)
    if not branch or not where:
        return None
    path = Path(where)
    return branch, path if path.is_absolute() else main_worktree(worktree) / path


_IDENTITY = {"GIT_AUTHOR_NAME": "statedir", "GIT_AUTHOR_EMAIL": "statedir@localhost",
             "GIT_COMMITTER_NAME": "statedir", "GIT_COMMITTER_EMAIL": "statedir@localhost",
             "GIT_AUTHOR_DATE": "1970-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "1970-01-01T00:00:00Z"}

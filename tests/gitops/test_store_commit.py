"""Commits built in the private index, by porcelain, by plumbing or in-process with libgit2:
only the given paths land; given a signing key, the plumbing path signs as `git commit` does."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir.gitops import commit_message, git, store_commit
from statedir.gitops.libgit import LibgitBackend
from tests.support.signing import NEEDS_SSH_KEYGEN, signature

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI

WAYS = ["porcelain", "plumbing", "libgit2"]


def commit_by(way: str, repo: Path, paths: list[str], text: str, **kwargs: str) -> str:
    """gitcommit.commit by `git commit --only`, by plumbing, or in-process (statedir.gitops.libgit)."""
    if way == "plumbing":
        return store_commit.commit(repo, paths, text, plumbing_above=0, **kwargs)
    return store_commit.commit(repo, paths, text, objects=LibgitBackend(repo) if way == "libgit2" else None, **kwargs)


def sh(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("way", WAYS)
def test_commit_takes_only_its_paths(repo: Path, way: str) -> None:
    (repo / "user.txt").write_text("base\n")
    sh(repo, "add", "user.txt")
    sh(repo, "commit", "-q", "-m", "base")
    (repo / "user.txt").write_text("staged\n")
    sh(repo, "add", "user.txt")
    (repo / "user.txt").write_text("unstaged\n")
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    first = commit_by(way, repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"), author="me")
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    second = commit_by(way, repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"), author="me")
    assert sh(repo, "rev-parse", "HEAD").strip() == second
    assert sh(repo, "rev-parse", "HEAD~1").strip() == first
    assert sh(repo, "show", "--name-only", "--format=", "HEAD").split() == ["s/a.yaml"]
    assert "Statedir-Action: stage" in sh(repo, "log", "-1", "--format=%B")
    assert sh(repo, "log", "-1", "--format=%an").strip() == "me"
    status = sh(repo, "status", "--porcelain")
    assert status == "MM user.txt\n"  # the user's staged and unstaged work, as it was
    assert "commit: two" in sh(repo, "reflog", "-1")


def test_a_lock_held_by_the_users_git_is_waited_for(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from statedir.errors import GitError

    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    store_commit.commit(repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"))
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    monkeypatch.setattr(git, "LOCK_RETRY_SECONDS", 0.0)
    with pytest.raises(GitError, match="index.lock"):
        store_commit.commit(repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"))
    monkeypatch.setattr(git, "LOCK_RETRY_SECONDS", 30.0)
    threading.Timer(0.3, lock.unlink).start()
    store_commit.commit(repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"))
    assert sh(repo, "log", "-1", "--format=%s").strip() == "two"


def test_libgit2_waits_for_a_ref_lock_held_by_the_users_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ref lock taken by the user's git (a commit, `git gc` packing refs) lasts milliseconds:
    the in-process commit waits for it as git's own do, instead of failing the transition."""
    import threading

    from statedir.errors import GitError

    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    commit_by("libgit2", repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"))
    lock = repo / ".git" / (sh(repo, "symbolic-ref", "HEAD").strip() + ".lock")
    lock.write_text("")
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    monkeypatch.setattr(git, "LOCK_RETRY_SECONDS", 0.0)
    with pytest.raises(GitError, match="lock"):
        commit_by("libgit2", repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"))
    monkeypatch.setattr(git, "LOCK_RETRY_SECONDS", 30.0)
    threading.Timer(0.3, lock.unlink).start()
    commit_by("libgit2", repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"))
    assert sh(repo, "log", "-1", "--format=%s").strip() == "two"
    assert sh(repo, "status", "--porcelain") == ""


def _tree_after(repo: Path, way: str, steps: list[dict[str, str | None]]) -> str:
    """Apply `steps` (path -> new text, None deletes) as commits; HEAD's tree at the end."""
    for n, step in enumerate(steps):
        for rel, text in step.items():
            target = repo / rel
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        commit_by(way, repo, sorted(step), commit_message.message(f"step {n}", "r1", "me", "stage"))
    return sh(repo, "rev-parse", "HEAD^{tree}").strip()


STEPS: list[dict[str, str | None]] = [
    {"s/runs/r1/state.yaml": "a: 1\n", "s/statedir.yaml": "v: 1\n"},
    {"s/runs/r2/state.yaml": "b: 1\n", "s/runs/r2/history/t.yaml": "- 1\n", "s/runs/r1-x/a.yaml": "x\n",
     "s/runs/r1.yaml": "dot sorts before slash\n", "s/runs/ü ñ.yaml": "non-ASCII names\n"},
    {"s/runs/r2/history/t.yaml": "- 1\n- 2\n", "s/runs/r1/state.yaml": None},  # r1/ empties and goes
    {"s/runs/r2/history/t.yaml": None, "s/runs/r2/state.yaml": None, "s/runs/r3/s.yaml": "c\n"},
]


def test_plumbing_builds_the_trees_porcelain_would(tmp_path: Path) -> None:
    """Directories added, emptied and removed, names that sort around `/`, non-ASCII names:
    the commit built from trees alone has exactly the tree `git commit --only` makes."""
    trees = []
    for way in WAYS:
        repo = tmp_path / way
        sh(tmp_path, "init", "-q", str(repo))
        (repo / "user.txt").write_text("base\n")
        sh(repo, "add", "user.txt")
        sh(repo, "commit", "-q", "-m", "base")
        trees.append(_tree_after(repo, way, STEPS))
        assert sh(repo, "status", "--porcelain") == ""  # the user's index agrees with HEAD
        assert sh(repo, "fsck", "--strict", "--no-dangling") == ""
        listing = sh(repo, "-c", "core.quotepath=false", "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        assert listing == ["s/runs/r1-x/a.yaml", "s/runs/r1.yaml", "s/runs/r3/s.yaml", "s/runs/ü ñ.yaml",
                           "s/statedir.yaml", "user.txt"]
    assert trees[0] == trees[1] == trees[2]


@pytest.mark.parametrize("way", ["plumbing", "libgit2"])
def test_plumbing_commits_on_an_unborn_branch(repo: Path, way: str) -> None:
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    first = commit_by(way, repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"))
    assert sh(repo, "rev-list", "--count", first).strip() == "1"
    assert sh(repo, "show", "HEAD:s/a.yaml") == "a: 1\n"
    assert sh(repo, "status", "--porcelain") == ""


def test_the_first_commit_of_a_sha256_repository(tmp_path: Path) -> None:
    """An unborn branch's compare-and-swap expects no ref, whatever the object ids' width."""
    repo = tmp_path / "sha256"
    sh(tmp_path, "init", "-q", "--object-format=sha256", str(repo))
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    first = store_commit.commit(repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"))
    assert len(first) == 64 and sh(repo, "show", "HEAD:s/a.yaml") == "a: 1\n"
    assert sh(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("way", ["plumbing", "libgit2"])
def test_a_commit_the_user_made_meanwhile_is_built_upon_not_lost(repo: Path, way: str) -> None:
    """Moving HEAD is a compare-and-swap (update-ref's, libgit2's): HEAD moved since statedir
    read it (here: statedir read it before the user's commit) is rebuilt upon, never overwritten."""
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    seen = store_commit.commit(repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"), plumbing_above=0)
    (repo / "user.txt").write_text("mine\n")
    sh(repo, "add", "user.txt")
    sh(repo, "commit", "-q", "-m", "the user's own")
    users = sh(repo, "rev-parse", "HEAD").strip()
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    objects = LibgitBackend(repo) if way == "libgit2" else None
    text = commit_message.message("two", "r1", "me", "stage")
    sha = store_commit._commit_trees(repo, ["s/a.yaml"], text, {}, seen, (), objects)
    assert sh(repo, "rev-parse", "HEAD").strip() == sha
    assert sh(repo, "rev-parse", "HEAD~1").strip() == users
    assert sh(repo, "show", "HEAD:user.txt") == "mine\n" and sh(repo, "show", "HEAD:s/a.yaml") == "a: 2\n"
    git.update_index(repo, ["s/a.yaml"])  # commit() does this before HEAD moves; _commit_trees alone does not
    assert sh(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("way", WAYS)  # libgit2 leaves a date set in the environment to git
def test_log_times_are_utc_whatever_the_zones(repo: Path, monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-03-01T10:00:00+02:00")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    commit_by(way, repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"))
    assert [(e["time"], e["action"], e["run_id"]) for e in commit_message.log(repo, "s")] == [
        ("2026-03-01T08:00:00Z", "stage", "r1")]


def test_libgit2_commits_as_git_would(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Identity from the caller, the environment, then user.name/user.email; the message byte
    for byte; the reflog entry git writes; HEAD's branch moved, the index not touched."""
    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    text = commit_message.message("one", "r1", "a.b", "stage", reason="line one\n\n\nafter two blank lines")
    sha = commit_by("libgit2", repo, ["s/a.yaml"], text, author="a.b")
    assert sh(repo, "cat-file", "commit", sha).split("\n\n", 1)[1] == text
    user = f"{sh(repo, 'config', 'user.name').strip()} <{sh(repo, 'config', 'user.email').strip()}>"
    assert sh(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == f"a.b <a.b@statedir.invalid>|{user}"
    assert sh(repo, "reflog", "-1", "--format=%gs").strip() == "commit (initial): one"
    assert sh(repo, "symbolic-ref", "HEAD").strip().startswith("refs/heads/")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Env Name")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "env@example.org")
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    commit_by("libgit2", repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"))
    assert sh(repo, "log", "-1", "--format=%cn <%ce>").strip() == "Env Name <env@example.org>"
    assert sh(repo, "reflog", "-1", "--format=%gs").strip() == "commit: two"
    assert sh(repo, "status", "--porcelain") == "" and sh(repo, "fsck", "--strict", "--no-dangling") == ""


def test_libgit2_takes_the_identity_git_takes(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """committer.* before user.*, EMAIL where no address is configured, and statedir's own
    identity where git would refuse: the committer of an in-process commit is git's."""
    import pygit2

    (Path.home() / ".gitconfig").write_text("")  # no identity but the repository's
    level = pygit2.enums.ConfigLevel.GLOBAL  # libgit2 fixed where it looks on its first use: here
    before, pygit2.settings.search_path[level] = pygit2.settings.search_path[level], str(Path.home())
    try:
        _identities(repo, monkeypatch)
    finally:
        pygit2.settings.search_path[level] = before


def _identities(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "s").mkdir()
    elsewhere = repo.parent / "global.gitconfig"  # GIT_CONFIG_GLOBAL, which libgit2 does not read
    elsewhere.write_text("[user]\n\tname = Global Name\n\temail = global@example.org\n")
    cases = [(("user.name", "User"), ("committer.name", "Committer"), ("user.email", "u@example.org")),
             (("user.name", "User"), ("EMAIL", "env@example.org")),
             (("GIT_CONFIG_GLOBAL", str(elsewhere)),),
             (("GIT_CONFIG_GLOBAL", str(elsewhere)), ("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "user.name"),
              ("GIT_CONFIG_VALUE_0", "Given"))]
    for n, case in enumerate(cases):
        for key, value in case:
            if key.isupper():
                monkeypatch.setenv(key, value)
            else:
                sh(repo, "config", key, value)
        found = []
        for way in ("porcelain", "libgit2"):
            (repo / "s" / "a.yaml").write_text(f"{n} {way}\n")
            commit_by(way, repo, ["s/a.yaml"], commit_message.message(f"{n} {way}", "r1", "me", "stage"), author="me")
            found.append(sh(repo, "log", "-1", "--format=%cn <%ce>").strip())
        assert found[0] == found[1], case
        for key, _ in case:
            if key.isupper():
                monkeypatch.delenv(key)
            else:
                sh(repo, "config", "--unset", key)


def test_names_that_are_not_utf8_keep_their_bytes(tmp_path: Path) -> None:
    """A file of the user's named in Latin-1 beside the store (in a tree statedir rebuilds):
    every way of committing keeps its name byte for byte."""
    import os

    trees = []
    for way in WAYS:
        repo = tmp_path / way
        sh(tmp_path, "init", "-q", str(repo))
        for where in (b"", b"s/"):
            (repo / "s").mkdir(exist_ok=True)
            with open(os.fsencode(repo) + b"/" + where + b"caf\xe9.txt", "wb") as f:
                f.write(b"user\n")
        sh(repo, "add", "-A")
        sh(repo, "commit", "-q", "-m", "base")
        trees.append(_tree_after(repo, way, [{"s/a.yaml": "a: 1\n"}, {"s/a.yaml": "a: 2\n", "s/b/c.yaml": "c\n"}]))
        assert sh(repo, "status", "--porcelain") == ""
        assert sh(repo, "fsck", "--strict", "--no-dangling") == ""
    assert trees[0] == trees[1] == trees[2]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts this process's descriptors in /proc")
def test_a_long_lived_object_store_lets_go_of_the_packs_gc_deletes(repo: Path) -> None:
    """libgit2 keeps every pack it opened: a server committing between the user's `git gc`s
    would hold each deleted pack (disk space, a descriptor) until it stops."""
    import os

    def held() -> list[str]:
        found = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith(str(repo)) and target.endswith("(deleted)"):
                found.append(target)
        return found

    objects = LibgitBackend(repo)
    (repo / "s").mkdir()
    for n in range(4):
        (repo / "s" / "a.yaml").write_text(f"a: {n}\n")
        store_commit.commit(repo, ["s/a.yaml"], commit_message.message(f"{n}", "r1", "me", "stage"), objects=objects)
        sh(repo, "gc", "-q")
    objects.blob_ids(sh(repo, "rev-parse", "HEAD").strip(), ["s/a.yaml"])
    assert held() == []
    assert sh(repo, "fsck", "--strict", "--no-dangling") == "" and sh(repo, "status", "--porcelain") == ""


def test_a_path_git_filters_as_it_commits_is_left_to_git(repo: Path) -> None:
    """A clean filter (git-crypt's, LFS's; here one that upper-cases) makes the blob differ
    from the file: an in-process commit would store the file as it is (plaintext where the
    user asked for encryption), so such paths are committed by git, as `git commit --only` does."""
    sh(repo, "config", "filter.upper.clean", "tr a-z A-Z")
    sh(repo, "config", "filter.upper.smudge", "cat")
    (repo / ".gitattributes").write_text("s/secret/** filter=upper\n")
    sh(repo, "add", ".gitattributes")
    sh(repo, "commit", "-q", "-m", "attributes")
    (repo / "s" / "secret").mkdir(parents=True)
    found = []
    for way in WAYS:
        (repo / "s" / "secret" / "a.yaml").write_text(f"a: {way}\n")
        commit_by(way, repo, ["s/secret/a.yaml"], commit_message.message(way, "r1", "me", "stage"))
        found.append(sh(repo, "show", "HEAD:s/secret/a.yaml"))
        assert sh(repo, "status", "--porcelain") == "", way
    assert found == ["A: PORCELAIN\n", "A: PLUMBING\n", "A: LIBGIT2\n"]


# --- git's index.lock is held only while the index is put in place and HEAD moves ------------------
@pytest.mark.parametrize("way", WAYS)
def test_the_index_lock_is_held_only_to_publish_the_index_and_move_head(
        repo: Path, way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer killed while it holds git's index.lock leaves it behind, and the user's own
    commits fail on it until a statedir command releases it; so the blobs, trees, commit object
    and next index are all made before the lock is taken. Under it run only: `git commit --only`
    (a small repository), `git update-ref` (plumbing), no git at all (libgit2)."""
    from statedir.gitops import indexfile

    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    commit_by(way, repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"))
    lock = repo / ".git" / "index.lock"
    steps: list[tuple[str, bool]] = []
    from statedir.gitops import process

    real_popen, real_run, real_update = subprocess.Popen, process.run, indexfile.update

    def seen(args: list[str]) -> None:
        if args and args[0] == "git":
            command = next(a for a in args[1:] if not a.startswith("-") and "=" not in a)
            steps.append((command, lock.exists()))

    def popen(args: list[str], *rest: object, **kwargs: object) -> object:  # every long-lived git process starts here
        seen(args)
        return real_popen(args, *rest, **kwargs)  # type: ignore[call-overload]

    def run(args: list[str], *rest: object) -> object:  # ... and every short one here
        seen(args)
        return real_run(args, *rest)  # type: ignore[arg-type]

    def update(*args: object, **kwargs: object) -> object:
        steps.append(("indexfile", lock.exists()))
        return real_update(*args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patched:  # undone alone: the test's isolation (HOME, git config) stays
        patched.setattr(subprocess, "Popen", popen)
        patched.setattr(process, "run", run)
        patched.setattr(indexfile, "update", update)
        (repo / "s" / "a.yaml").write_text("a: 2\n")
        sha = commit_by(way, repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"))
    held = [step for step, locked in steps if locked]
    assert held == {"porcelain": ["commit"], "plumbing": ["update-ref"], "libgit2": []}[way], steps
    assert any(not locked for _, locked in steps), steps  # the rest was done before
    assert sh(repo, "rev-parse", "HEAD").strip() == sha and not lock.exists()
    assert sh(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("way", WAYS)
def test_what_the_user_stages_while_the_next_index_is_made_is_kept(
        repo: Path, way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next index is begun from the user's before the lock; a `git add` of the user's
    landing in between is seen under the lock, and the next index begun again from it."""
    from statedir.gitops import index_lock

    (repo / "s").mkdir()
    (repo / "s" / "a.yaml").write_text("a: 1\n")
    commit_by(way, repo, ["s/a.yaml"], commit_message.message("one", "r1", "me", "stage"))
    real_held = index_lock.held

    def held(gitdir: Path, wait: float) -> object:
        (repo / "user.txt").write_text("staged meanwhile\n")
        sh(repo, "add", "user.txt")  # the user's git, just before statedir takes the lock
        return real_held(gitdir, wait)

    monkeypatch.setattr(index_lock, "held", held)
    (repo / "s" / "a.yaml").write_text("a: 2\n")
    commit_by(way, repo, ["s/a.yaml"], commit_message.message("two", "r1", "me", "stage"))
    assert sh(repo, "status", "--porcelain") == "A  user.txt\n"
    assert sh(repo, "show", "HEAD:s/a.yaml") == "a: 2\n"
    assert sh(repo, "show", "--name-only", "--format=", "HEAD").split() == ["s/a.yaml"]


@NEEDS_SSH_KEYGEN
def test_large_repository_commits_are_signed_too(repo: Path, keys: dict[str, Path]) -> None:
    """The plumbing path (commit-tree and a compare-and-swap update-ref) signs as `git commit` does."""
    (repo / "a.txt").write_text("one\n")
    store_commit.commit(repo, ["a.txt"], "first\n", author="x")
    (repo / "a.txt").write_text("two\n")
    sha = store_commit.commit(repo, ["a.txt"], "second\n", author="x", plumbing_above=0, signing_key=str(keys["alice"]))
    assert git.head(repo) == sha and signature(repo) is not None
    allowed = repo.parent / "allowed"
    allowed.write_text(f"x {keys['alice'].with_suffix('.pub').read_text()}")
    proc = subprocess.run(["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", sha], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert sh(repo, "status", "--porcelain") == ""

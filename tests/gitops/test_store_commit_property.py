"""store_commit.commit by plumbing (a spliced index, trees edited as bytes, loose objects; git's
processes or libgit2) against `git commit --only` of the same paths in a copy of the same
repository: the same tree, the same index and status after, fsck --strict clean; in random
repositories with the user's own staging, packed trees (`git gc`) and group-shared ones. Slow:
two repositories and a few dozen git processes a seed."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from statedir.gitops import index_splice, store_commit
from statedir.gitops.libgit import LibgitBackend
from tests.gitops.test_index_splice_property import PARTS, git, names, write

pytestmark = [pytest.mark.usefixtures("isolated"), pytest.mark.slow]

SEEDS = range(2000, 2040)


def user_state(repo: Path, rng: random.Random, files: list[str]) -> set[str]:
    """The user's own work beside the store's: staged, unstaged, intent-to-add, skip-worktree."""
    used = set(rng.sample(files, min(len(files) // 3, 4)))
    for n, rel in enumerate(sorted(used)):
        write(repo, rel, f"user's {rel}\n")
        if n % 2 == 0:
            git(repo, "add", "--", rel)  # staged; the others left unstaged
    if rng.random() < 0.5:
        write(repo, "intent/added.txt", "intent\n")
        git(repo, "add", "-N", "--", "intent/added.txt")
    if rng.random() < 0.3:
        rel = rng.choice([f for f in files if f not in used])
        git(repo, "update-index", "--skip-worktree", "--", rel)
        used.add(rel)
    return used


def mine_too(rng: random.Random, used: set[str], repo: Path) -> list[str]:
    """Now and then a path the user staged or changed: the store's commit takes the work tree's."""
    theirs = [f for f in sorted(used) if (repo / f).is_file() and f != "intent/added.txt"
              and b"S " not in git(repo, "ls-files", "-v", "--", f).stdout[:2]]
    return [rng.choice(theirs)] if theirs and rng.random() < 0.3 else []


def touch(repo: Path, rng: random.Random, files: list[str], used: set[str], round_: int) -> list[str]:
    free = [f for f in files if f not in used and (repo / f).is_file()]
    paths = []
    for rel in rng.sample(free, min(len(free), rng.randint(1, 5))):
        what = rng.random()
        if what < 0.5:
            write(repo, rel, f"{rel} store {round_}\n")
        elif what < 0.8:
            (repo / rel).unlink()
        else:
            (repo / rel).chmod(0o755)
        paths.append(rel)
    for _ in range(rng.randint(0, 3)):
        base = rng.choice(files).rsplit("/", 1)[0] if rng.random() < 0.7 else ""
        rel = "/".join(p for p in (base, "new", rng.choice(PARTS) + str(round_)) if p)
        if not (repo / rel).exists() and not any(f.startswith(rel + "/") for f in files) \
                and not any(rel.startswith(f + "/") for f in files):
            write(repo, rel, f"new {rel}\n")
            paths.append(rel)
    if rng.random() < 0.25:  # a file becomes a directory, or a directory a file
        rel = rng.choice(free)
        if rel not in paths and rng.random() < 0.5:
            (repo / rel).unlink()
            write(repo, f"{rel}/now.txt", "under what was a file\n")
            paths += [rel, f"{rel}/now.txt"]
        elif "/" in rel and not any(f in used for f in files if f.startswith(rel.rsplit("/", 1)[0] + "/")):
            folder = rel.rsplit("/", 1)[0]
            inside = git(repo, "ls-files", "-z", "--", folder).stdout.decode().split("\0")[:-1]
            shutil.rmtree(repo / folder)
            write(repo, folder, "now a file\n")
            paths = [p for p in paths if not p.startswith(folder + "/")] + inside + [folder]
    return paths


def views(repo: Path) -> dict[str, bytes]:
    return {" ".join(args): git(repo, *args).stdout for args in (
        ("rev-parse", "HEAD^{tree}"), ("ls-files", "-s"), ("ls-files", "-v"),
        ("status", "--porcelain=v2", "-uall", "-z"))}


def check(tmp_path: Path, seed: int, notes: list[str]) -> None:
    rng = random.Random(seed)
    ours = tmp_path / f"ours{seed}"
    git(tmp_path, "init", "-q", str(ours))
    files = names(rng)
    for rel in files:
        write(ours, rel, f"{rel}\n")
    git(ours, "add", "-A")
    git(ours, "commit", "-q", "-m", "base")
    used = user_state(ours, rng, files)
    libgit = rng.random() < 0.5
    shared = rng.random() < 0.25
    if shared:
        git(ours, "config", "core.sharedRepository", "group")
    notes += [f"libgit={libgit}", f"shared={shared}"]
    for round_ in range(3):
        if rng.random() < 0.3:
            git(ours, "gc", "-q")  # the parent's trees packed: read through cat-file
            notes.append("gc")
        paths = touch(ours, rng, files, used, round_) + mine_too(rng, used, ours)
        theirs = tmp_path / f"theirs{seed}"  # the same repository and work tree, for git's commit
        shutil.rmtree(theirs, ignore_errors=True)
        shutil.copytree(ours, theirs, symlinks=True)
        notes.append(f"round {round_}: {paths}")
        objects = LibgitBackend(ours) if libgit else None
        store_commit.commit(ours, paths, f"store {round_}\n", plumbing_above=0, objects=objects)
        # what `git commit --only` does (which a path turned into a directory trips up): HEAD
        # with these paths as the work tree has them, in an index of its own and in the user's
        temporary = theirs / ".git" / "only-index"
        git(theirs, "read-tree", "HEAD", index=temporary)
        git(theirs, "add", "-A", "--", *paths, index=temporary)
        tree = git(theirs, "write-tree", index=temporary).stdout.decode().strip()
        made = git(theirs, "commit-tree", tree, "-p", "HEAD", "-m", f"store {round_}").stdout.decode().strip()
        git(theirs, "update-ref", "HEAD", made)
        git(theirs, "add", "-A", "--", *paths)
        mine, reference = views(ours), views(theirs)
        for view in reference:
            assert mine[view] == reference[view], view
        assert git(ours, "status", "--porcelain", "--", *paths).stdout == b""
        fsck = git(ours, "fsck", "--strict", "--no-dangling", "--no-progress", check=False)
        assert fsck.returncode == 0 and not fsck.stdout, fsck.stdout + fsck.stderr
        assert git(ours, "rev-list", "--count", "HEAD").stdout.strip() == str(round_ + 2).encode()
        files = sorted(set(files) | {p for p in paths if (ours / p).is_file()})


def test_plumbing_commits_agree_with_git_commit_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spliced = []
    real = index_splice.splice

    def splice(*args: object) -> bool:
        spliced.append(real(*args))  # type: ignore[arg-type]
        return spliced[-1]

    monkeypatch.setattr(index_splice, "splice", splice)
    for seed in SEEDS:
        notes: list[str] = []
        try:
            check(tmp_path, seed, notes)
        except AssertionError as exc:
            raise AssertionError(f"seed {seed} ({'; '.join(notes)}): {exc}") from None
        shutil.rmtree(tmp_path / f"ours{seed}")
        shutil.rmtree(tmp_path / f"theirs{seed}")
    assert spliced.count(True) > len(SEEDS), spliced.count(False)  # the fast path is what was compared

"""The spliced index against git's own, on random repositories and index states made with real
git: either the splice declines and leaves the index byte-identical, or what git reads from it
(entries with their stat data and flags, status, the tree, fsck) is what `git update-index`
makes of the same paths. Slow: 200 seeds of about 30 git processes each, about 20 s."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import index_splice

pytestmark = [pytest.mark.usefixtures("isolated"), pytest.mark.slow]

PARTS = ["a", "a-b", "a.b", "a0", "a b", "b", "-", ".x", "0", "é", "日本", "a+", "z"]
_FIRST = int(os.environ.get("SPLICE_SEED0", 1000))  # a failure names its seed: SPLICE_SEED0=N SPLICE_SEEDS=1
SEEDS = range(_FIRST, _FIRST + int(os.environ.get("SPLICE_SEEDS", 200)))
ROUNDS = 3  # each splice's output the next one's input


def git(repo: Path, *args: str, index: Path | None = None, stdin: bytes | None = None,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **({"GIT_INDEX_FILE": str(index)} if index else {})}
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=env, input=stdin)
    if check and proc.returncode:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc


def names(rng: random.Random) -> list[str]:
    """File names whose bytes sort around '/', some deep, some long; none where a directory is."""
    out = set()
    for _ in range(rng.randint(20, 70)):
        depth = rng.choice([1, 1, 2, 2, 3, 6])
        out.add("/".join(rng.choice(PARTS) for _ in range(depth)))
    for _ in range(rng.randint(0, 2)):  # long ones: about 300 to 1,200 bytes
        out.add("/".join("L" * rng.randint(150, 230) + rng.choice(PARTS) for _ in range(rng.randint(2, 5))))
    return sorted(n for n in out if not any(m.startswith(n + "/") for m in out))


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def unusual_state(repo: Path, rng: random.Random, files: list[str]) -> tuple[set[str], list[str]]:
    """Index states of git's own on some files; returns the files it used (kept out of the
    touched, where an edit would be git's anyway) and the notes of what it did."""
    used: set[str] = set()
    notes: list[str] = []

    def pick() -> str:
        rel = rng.choice([f for f in files if f not in used])
        used.add(rel)
        return rel

    if rng.random() < 0.3:  # conflicts from a real merge, one of them resolved (resolve-undo)
        conflicted = [pick(), pick()]
        git(repo, "checkout", "-q", "-b", "side")
        for rel in conflicted:
            write(repo, rel, f"side {rel}\n")
        git(repo, "commit", "-q", "-am", "side")
        git(repo, "checkout", "-q", "-")
        for rel in conflicted:
            write(repo, rel, f"main {rel}\n")
        git(repo, "commit", "-q", "-am", "main")
        git(repo, "merge", "-q", "side", check=False)
        if rng.random() < 0.6:
            write(repo, conflicted[0], "resolved\n")
            git(repo, "add", "--", conflicted[0])
        notes.append("conflict")
    if rng.random() < 0.5:
        rel = pick()
        write(repo, rel, "staged by the user\n")
        git(repo, "add", "--", rel)
        notes.append("staged")
    if rng.random() < 0.4:
        rel = f"intent{rng.randint(0, 9)}/{rng.choice(PARTS)}"
        write(repo, rel, "intent\n")
        git(repo, "add", "-N", "--", rel)
        used.add(rel)
        notes.append("intent-to-add")
    for flag in ("--skip-worktree", "--assume-unchanged"):
        if rng.random() < 0.4:
            git(repo, "update-index", flag, "--", pick())
            notes.append(flag)
    if rng.random() < 0.3:  # entries of long paths (over 0xFFF bytes too) with no file
        blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"long\n").stdout.decode().strip()
        for _ in range(2):
            rel = "/".join("q" * 200 for _ in range(rng.randint(15, 21))) + rng.choice(PARTS)
            git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")  # never touched
        notes.append("long entries")
    if os.geteuid() == 0 and rng.random() < 0.4:  # a gid whose bytes read as a file's mode
        for rel in rng.sample(files, len(files) // 2):
            os.chown(repo / rel, -1, rng.choice([0o100644, 0o100755, 0o120000]))
        git(repo, "update-index", "--really-refresh", check=False)
        notes.append("gid")
    return used, notes


def index_format(repo: Path, rng: random.Random) -> list[str]:
    notes = []
    version = rng.choice([2, 2, 3, 3, 4])
    git(repo, "update-index", "--index-version", str(version))
    notes.append(f"v{version}")
    if rng.random() < 0.3:
        git(repo, "config", "core.untrackedCache", "true")
        git(repo, "status", "-uall", "--porcelain")
        notes.append("UNTR")
    if rng.random() < 0.1:
        git(repo, "update-index", "--split-index")
        notes.append("split")
    if rng.random() < 0.4:
        git(repo, "-c", "index.threads=2", "-c", "index.recordEndOfIndexEntries=true",
            "-c", "index.recordOffsetTable=true", "update-index", "--force-write-index")
        notes.append("EOIE/IEOT")
    if rng.random() < 0.2:
        git(repo, "update-index", "--index-version", "3")
        notes.append("to v3")
    return notes


def touch(repo: Path, rng: random.Random, files: list[str], kept: set[str], round_: int) -> list[str]:
    """Changes, additions, deletions, executable bits, symlinks, file <-> directory swaps."""
    free = [f for f in files if f not in kept and (repo / f).is_file()]
    touched: list[str] = []
    for rel in rng.sample(free, min(len(free), rng.randint(1, 6))):
        what = rng.random()
        if what < 0.35:
            write(repo, rel, f"{rel} changed {round_}\n")
        elif what < 0.55:
            (repo / rel).unlink()
        elif what < 0.65:
            (repo / rel).chmod(0o755)
        elif what < 0.72:
            (repo / rel).unlink()
            (repo / rel).symlink_to("elsewhere")
        elif what < 0.8:  # a file becomes a directory
            (repo / rel).unlink()
            write(repo, f"{rel}/{rng.choice(PARTS)}", "under\n")
            touched.append(f"{rel}/{os.listdir(repo / rel)[0]}")
        touched.append(rel)
    for _ in range(rng.randint(0, 4)):  # new names, some beside or above a file, or a directory
        base = rng.choice(files).rsplit("/", 1)[0] if rng.random() < 0.7 else ""
        rel = "/".join(p for p in (base, rng.choice(PARTS) + rng.choice(["", "-n", ".n", "0"])) if p)
        if (repo / rel).exists() or any(f.startswith(rel + "/") for f in files) and rng.random() < 0.7:
            continue
        try:
            write(repo, rel, f"new {round_}\n")
        except OSError:  # under a file
            continue
        touched.append(rel)
    if rng.random() < 0.15 and files:  # a directory becomes a file
        folder = rng.choice(files).rsplit("/", 1)[0]
        if "/" in rng.choice(files) and (repo / folder).is_dir():
            inside = [f for f in files if f.startswith(folder + "/")]
            shutil.rmtree(repo / folder)
            write(repo, folder, "now a file\n")
            touched += [folder, *inside]
    if rng.random() < 0.2 and kept:  # a path git's state is on
        touched.append(rng.choice(sorted(kept)))
    rng.shuffle(touched)
    return touched


def blobs(repo: Path, paths: list[str]) -> dict[str, str]:
    present = [p for p in paths if (repo / p).is_file() and not (repo / p).is_symlink()]
    if not present:
        return {}
    return dict(zip(present, git(repo, "hash-object", "-w", "--", *present).stdout.decode().split(), strict=True))


def views(repo: Path, index: Path) -> dict[str, bytes]:
    out = {}
    for args in (("ls-files", "-s", "--debug"), ("ls-files", "-v"), ("ls-files", "--resolve-undo"),
                 ("status", "--porcelain=v2", "-uall", "-z")):
        out[" ".join(args)] = git(repo, *args, index=index).stdout
    if not git(repo, "ls-files", "-u", index=index).stdout:
        out["write-tree"] = git(repo, "write-tree", index=index).stdout
    fsck = git(repo, "fsck", "--no-dangling", "--no-progress", index=index, check=False)
    out["fsck"] = b"%d %s" % (fsck.returncode, fsck.stdout)
    return out


def check(repo: Path, seed: int, notes: list[str], counts: dict[str, int], width: int) -> None:
    rng = random.Random(seed)
    files = names(rng)
    for rel in files:
        write(repo, rel, f"{rel}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    kept, state = unusual_state(repo, rng, files)
    notes += state + index_format(repo, rng)
    ours, theirs = repo / ".git" / "ours", repo / ".git" / "theirs"
    shutil.copyfile(repo / ".git" / "index", ours)
    shutil.copyfile(repo / ".git" / "index", theirs)
    for round_ in range(ROUNDS):
        paths = touch(repo, rng, files, kept, round_)
        notes.append(f"round {round_}: {paths}")
        before = ours.read_bytes()
        done = index_splice.splice(repo / ".git", repo, ours, paths, width, blobs(repo, paths))
        by_git = git(repo, "update-index", "--add", "--remove", "-z", "--stdin", index=theirs,
                     stdin=b"".join(p.encode() + b"\0" for p in paths), check=False)
        if not done:
            counts["declined"] += 1
            assert ours.read_bytes() == before, "declined, but the index changed"
            assert not list((repo / ".git").glob("ours.*.tmp"))
            if by_git.returncode:
                return  # git refuses these paths too
            shutil.copyfile(theirs, ours)  # git did it: the next round starts from git's
            continue
        counts["spliced"] += 1
        assert by_git.returncode == 0, f"spliced where git refuses: {by_git.stderr!r}"
        mine, git_s = views(repo, ours), views(repo, theirs)
        for view in git_s:
            assert mine.get(view) == git_s[view], view
        files = sorted(set(files) | {p for p in paths if (repo / p).is_file()})


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_splices_agree_with_git_on_random_repositories(tmp_path: Path, object_format: str) -> None:
    counts = {"spliced": 0, "declined": 0}
    seeds = SEEDS if object_format == "sha1" else SEEDS[:len(SEEDS) // 4]
    for seed in seeds:
        repo = tmp_path / f"r{seed}"
        git(tmp_path, "init", "-q", f"--object-format={object_format}", str(repo))
        notes: list[str] = []
        try:
            check(repo, seed, notes, counts, 20 if object_format == "sha1" else 32)
        except AssertionError as exc:
            raise AssertionError(f"seed {seed} ({'; '.join(notes)}): {exc}") from None
        shutil.rmtree(repo)
    assert counts["spliced"] > len(seeds) // 2, counts  # many rounds spliced, not declined
    print(counts)

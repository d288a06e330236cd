"""The spliced index gives what `git update-index` gives, looks at a few entries of a large one,
or declines and writes nothing."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from statedir.gitops import index_splice
from tests.support import indexes
from tests.support.indexes import agree, by_git, copies, edit, populate, sh
from tests.support.util import diverge

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git


def blobs(repo: Path, paths: list[str]) -> dict[str, str]:
    present = [p for p in paths if (repo / p).is_file()]
    out = sh(repo, "hash-object", "-w", "--", *present).split() if present else []
    return dict(zip(present, out, strict=True))


def spliced(repo: Path, index: Path, paths: list[str], width: int = 20) -> bool:
    return index_splice.splice(repo / ".git", repo, index, paths, width, blobs(repo, paths))


def both(repo: Path, paths: list[str], width: int = 20) -> tuple[Path, Path]:
    return indexes.both(repo, paths, lambda ours: spliced(repo, ours, paths, width))


@pytest.mark.parametrize("version", [2, 3])
def test_changed_added_and_deleted_paths_agree_with_git(repo: Path, version: int) -> None:
    populate(repo)
    sh(repo, "update-index", "--index-version", str(version))
    (repo / "user.txt").write_text("staged by the user\n")
    sh(repo, "add", "user.txt")
    if version == 3:
        (repo / "intent.txt").write_text("added with intent\n")
        sh(repo, "add", "-N", "intent.txt")  # an entry with extended flags, passed through as it is
    ours, theirs = both(repo, edit(repo))
    agree(repo, ours, theirs)
    assert "user.txt" in sh(repo, "diff", "--cached", "--name-only", "HEAD", index=ours)  # the user's staging kept


def test_a_spliced_index_is_spliced_again(repo: Path) -> None:
    """The first splice drops the cache tree and writes where the entries end (EOIE); the next
    reads that, and git reads both."""
    populate(repo)
    ours, theirs = both(repo, edit(repo))
    assert b"EOIE" in ours.read_bytes()[-60:] and b"TREE" not in ours.read_bytes()
    (repo / "d" / "b.yaml").write_text("changed again\n")
    (repo / "d" / "new.yaml").unlink()
    (repo / "m.txt").write_text("in the middle\n")
    paths = ["d/b.yaml", "d/new.yaml", "m.txt"]
    assert spliced(repo, ours, paths)
    by_git(repo, theirs, paths)
    agree(repo, ours, theirs)
    sh(repo, "fsck", "--no-dangling")  # git checks the index's checksum here


def test_a_sha256_repository(tmp_path: Path) -> None:
    repo = tmp_path / "r256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    populate(repo)
    ours, theirs = both(repo, edit(repo), width=32)
    agree(repo, ours, theirs)


def test_random_edits_agree_with_git(repo: Path) -> None:
    """Names made of the bytes that sort around '/' ('-', '.', '0', 'a'), edited at random, each
    index spliced from the one before."""
    rng = random.Random(37)
    parts = ["a", "a-b", "a.b", "a0", "b", "-", ".x"]
    names = sorted({"/".join(rng.choice(parts) for _ in range(rng.randint(1, 3))) for _ in range(60)})
    files = [n for n in names if not any(m.startswith(n + "/") for m in names)]  # no file where a directory is
    populate(repo, tuple(files))
    ours, theirs = copies(repo)
    for round_ in range(8):
        touched = rng.sample(files, 6)
        for rel in touched:
            if (repo / rel).exists() and rng.random() < 0.3:
                (repo / rel).unlink()
            else:
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                (repo / rel).write_text(f"{rel} {round_}\n")
        assert spliced(repo, ours, touched), touched
        by_git(repo, theirs, touched)
        agree(repo, ours, theirs)


def test_a_large_index_is_searched_not_read(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries looked at grow with the index's logarithm (a binary search), not its size."""
    looked: list[int] = []
    real = index_splice._Entries.entry_at

    def counted(self: index_splice._Entries, start: int) -> tuple[bytes, int] | None:
        looked.append(start)
        return real(self, start)

    def looks(files: int) -> int:
        repo_n = repo / f"r{files}"
        subprocess.run(["git", "init", "-q", str(repo_n)], check=True)
        folder = repo_n / "runs"
        folder.mkdir()
        for n in range(files):
            (folder / f"r{n:05}.yaml").write_text(f"{n}\n")
        sh(repo_n, "add", "-A")
        sh(repo_n, "commit", "-q", "-m", "runs")
        (folder / f"r{files // 3:05}.yaml").write_text("changed\n")
        (folder / "r99999x.yaml").write_text("added\n")
        ours, theirs = copies(repo_n)
        paths = [f"runs/r{files // 3:05}.yaml", "runs/r99999x.yaml"]
        looked.clear()
        with monkeypatch.context() as patched:
            patched.setattr(index_splice._Entries, "entry_at", counted)
            assert spliced(repo_n, ours, paths)
        by_git(repo_n, theirs, paths)
        agree(repo_n, ours, theirs)
        return len(looked)

    small, large = looks(100), looks(6400)
    assert large < 2 * small + 100, (small, large)  # 64 times the entries
    assert large < 400


@pytest.mark.parametrize("setup", [
    ["update-index", "--index-version", "4"],
    ["update-index", "--split-index"],
    ["update-index", "--skip-worktree", "d/b.yaml"],
    ["update-index", "--assume-unchanged", "d/b.yaml"],
])
def test_unusual_indexes_and_entries_are_left_to_git(repo: Path, setup: list[str]) -> None:
    populate(repo)
    sh(repo, *setup)
    (repo / "d" / "b.yaml").write_text("changed\n")
    before = (repo / ".git" / "index").read_bytes()
    assert not spliced(repo, repo / ".git" / "index", ["d/b.yaml"])
    assert (repo / ".git" / "index").read_bytes() == before
    assert not list((repo / ".git").glob("index.*.tmp"))


def test_flags_elsewhere_are_kept_as_they_are(repo: Path) -> None:
    populate(repo)
    sh(repo, "update-index", "--skip-worktree", "a.txt")
    ours, theirs = both(repo, edit(repo))
    agree(repo, ours, theirs)
    assert sh(repo, "ls-files", "-v", "a.txt", index=ours).startswith("S ")


@pytest.mark.parametrize("case", ["file where a directory is", "file under a file", "no blob"])
def test_what_git_decides_is_left_to_git(repo: Path, case: str) -> None:
    populate(repo)
    if case == "file where a directory is":
        shutil.rmtree(repo / "d" / "e")
        (repo / "d" / "e").write_text("now a file\n")
        paths, known = ["d/e"], {"d/e": "0" * 40}
    elif case == "file under a file":
        (repo / "a.txt").unlink()
        (repo / "a.txt").mkdir()
        (repo / "a.txt" / "f").write_text("under what was a file\n")
        paths, known = ["a.txt/f"], {"a.txt/f": "0" * 40}
    else:
        (repo / "d" / "b.yaml").write_text("changed\n")
        paths, known = ["d/b.yaml"], {}
    index = repo / ".git" / "index"
    before = index.read_bytes()
    assert not index_splice.splice(repo / ".git", repo, index, paths, 20, known)
    assert index.read_bytes() == before


def test_a_conflicted_entry_is_left_to_git(repo: Path) -> None:
    populate(repo)
    diverge(repo, "a.txt")
    subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True)  # conflicts on a.txt
    (repo / "a.txt").write_text("resolved by hand\n")
    assert not spliced(repo, repo / ".git" / "index", ["a.txt"])
    ours, theirs = both(repo, ["d/b.yaml"])  # elsewhere the conflict's stages are passed through
    for args in (("ls-files", "-s", "--debug"), ("status", "--porcelain")):  # no tree is written with a conflict
        assert sh(repo, *args, index=ours) == sh(repo, *args, index=theirs), args


def test_an_extension_it_does_not_know_is_not_taken_for_entries(repo: Path) -> None:
    """An index whose only extension this module does not know: the entries' end is not found,
    and git does the update."""
    populate(repo)
    index = repo / ".git" / "index"
    raw = index.read_bytes()
    cut = raw.find(b"TREE")
    import hashlib
    body = raw[:cut] + b"ZZZZ" + (16).to_bytes(4, "big") + b"\x07" * 16
    index.write_bytes(body + hashlib.sha1(body).digest())
    sh(repo, "ls-files")  # git reads it (an optional extension it skips)
    (repo / "d" / "b.yaml").write_text("changed\n")
    before = index.read_bytes()
    assert not spliced(repo, index, ["d/b.yaml"])
    assert index.read_bytes() == before


def test_an_entry_that_reads_as_another_at_an_offset_is_not_taken_for_one(repo: Path) -> None:
    """Read 8 bytes into an entry whose gid is a file mode's number (33188 is 0o100644), the
    bytes look like an entry's header, and the path's bytes 6-7 like the flags of a shorter one:
    a boundary there is refused (no path's bytes are plain flags), so the entry is found."""
    import hashlib

    target = "runs/a0." + "a" * 42 + ".yml"
    rng = random.Random(1)  # neighbours that put a search's probe inside the target's entry (a reviewer's 63rd draw)
    for _ in range(63):
        names = [f"a{'b' * rng.randint(1, 30)}{i}" for i in range(rng.randint(0, 30))] + [target] + \
            [f"z{'b' * rng.randint(1, 30)}{i}" for i in range(rng.randint(0, 30))]
    for rel in names:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(rel)
    sh(repo, "add", "-A")
    index = repo / ".git" / "index"
    raw = bytearray(index.read_bytes()[:-20])
    at = 12
    for _ in range(int.from_bytes(raw[8:12], "big")):  # every entry's gid made 33188
        raw[at + 32:at + 36] = (33188).to_bytes(4, "big")
        at += (62 + raw.index(b"\0", at + 62) - (at + 62) + 8) // 8 * 8
    index.write_bytes(bytes(raw) + hashlib.sha1(raw).digest())
    entries = index_splice._Entries(bytes(raw) + b"\0" * 20, 20, index_splice._entries_end(index.read_bytes(), 20))
    assert entries.find(target.encode())[1] is not None
    (repo / target).write_text("changed\n")
    ours, theirs = both(repo, [target])
    agree(repo, ours, theirs)
    assert sh(repo, "ls-files", index=ours).count(target) == 1


def test_a_file_where_a_directory_is_with_names_between_is_left_to_git(repo: Path) -> None:
    """'d-x' sorts between 'd' and 'd/b': the directory is found all the same (git refuses)."""
    populate(repo, ("d-x", "d.y", "d/b"))
    shutil.rmtree(repo / "d")
    (repo / "d").write_text("now a file\n")
    index = repo / ".git" / "index"
    before = index.read_bytes()
    assert not spliced(repo, index, ["d"])
    assert index.read_bytes() == before


def test_a_path_given_twice_is_one_entry(repo: Path) -> None:
    populate(repo)
    (repo / "new.txt").write_text("added\n")
    (repo / "a.txt").write_text("changed\n")
    ours, theirs = copies(repo)
    assert spliced(repo, ours, ["new.txt", "a.txt", "new.txt", "a.txt"])
    by_git(repo, theirs, ["new.txt", "a.txt"])
    agree(repo, ours, theirs)


def test_the_new_index_keeps_the_users_mode(repo: Path) -> None:
    """A group's repository (core.sharedRepository set in a config file statedir does not read)
    has a group-writable index: the spliced one is too."""
    populate(repo)
    (repo / "d" / "b.yaml").write_text("changed\n")
    ours, _ = copies(repo)
    ours.chmod(0o664)
    assert spliced(repo, ours, ["d/b.yaml"])
    assert ours.stat().st_mode & 0o777 == 0o664


def test_a_gid_that_reads_as_a_mode_does_not_misplace_an_entry(repo: Path) -> None:
    """Each entry's gid 33188 (0o100644: a file's mode) 8 bytes in makes a seeming entry there,
    its path a tail of the real one's (b"" for a short name), ending where the real one ends: a
    search landing on it is brought back to the entry that holds it (tests/gitops/
    test_index_splice_property.py found it)."""
    import hashlib

    rng = random.Random(1)
    names = sorted({"".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 14))) for _ in range(300)})
    for rel in names:
        (repo / rel).write_text(rel)
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "base")
    index = repo / ".git" / "index"
    raw = bytearray(index.read_bytes())
    at = 12
    for _ in names:  # every entry's gid set, as `chown :33188` and a refresh would
        raw[at + 32:at + 36] = (0o100644).to_bytes(4, "big")
        at += (62 + (int.from_bytes(raw[at + 60:at + 62], "big") & 0xFFF) + 8) // 8 * 8
    index.write_bytes(bytes(raw[:-20]) + hashlib.sha1(raw[:-20]).digest())
    sh(repo, "ls-files")  # git reads it
    for n in range(40):
        new = "".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 6))) + "z"
        (repo / new).write_text("new\n")
        ours, theirs = copies(repo)
        assert spliced(repo, ours, [new])
        by_git(repo, theirs, [new])
        listed = sh(repo, "ls-files", "-z", index=ours).split("\0")[:-1]
        assert listed == sorted(listed, key=lambda name: name.encode()), (n, new)
        agree(repo, ours, theirs)
        (repo / new).unlink()


def test_a_write_that_fails_leaves_no_file_behind(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk while the new index is written: the error is the caller's, the index is as it
    was, and no temporary file is left beside it."""
    populate(repo)
    (repo / "d" / "b.yaml").write_text("changed\n")
    ours, _ = copies(repo)
    before = ours.read_bytes()

    def full(fd: int, pieces: list[bytes]) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index_splice, "_write_all", full)
    with pytest.raises(OSError):
        spliced(repo, ours, ["d/b.yaml"])
    assert ours.read_bytes() == before
    assert sorted(p.name for p in ours.parent.glob("ours*")) == ["ours"]


def test_a_seeming_entry_that_ends_where_the_real_one_ends_is_not_chosen(repo: Path) -> None:
    """The mirror of the gid's case (a reviewer's): an mtime of 33188 s reads as a file's mode, and
    a blob id whose bytes read as flags of the right length, so a seeming entry begins in the
    header of the entry for T and ends where T ends. The splice declines, or agrees with git."""
    import hashlib

    first = "a" * 200 + "/" + "a" * 200 + "/" + "a" * 200  # long, so the search's probe lands in it
    target = "z" * 200 + "/" + "z" * 99
    for n in range(10 ** 6):  # about 1 blob in 8192 has such bytes
        data = b"x%d\n" % n
        oid = hashlib.sha1(b"blob %d\0" % len(data) + data).digest()
        if not oid[4] & 0x40 and (oid[4] << 8 | oid[5]) & 0xFFF == 16 + len(target) and 0 not in oid[6:] \
                and oid[6] < ord("z"):
            break
    for rel, content in ((first, b"p\n"), (target, data)):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(content)
    os.utime(repo / target, (33188, 33188))
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "base")
    (repo / target).write_bytes(b"changed\n")
    os.utime(repo / target, (33188, 33188))
    (repo / "y.txt").write_text("added after it\n")
    for paths in ([target], ["y.txt"]):
        ours, theirs = copies(repo)
        if spliced(repo, ours, paths):
            by_git(repo, theirs, paths)
            agree(repo, ours, theirs)
        else:
            assert ours.read_bytes() == (repo / ".git" / "index").read_bytes()

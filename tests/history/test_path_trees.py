"""What a run's commits changed, read from the run's own trees (statedir.history.path_trees,
issue 37): the lines git's own `log --raw` prints for them, whatever the edits (files added,
deleted, made executable, made symlinks, turned into folders and back, the folder gone, merges,
a root commit); and once the run's trees are remembered, `verify RUN` reads no listing of
`runs/`, with the same result as git's diff gives it."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.gitops.objects import ObjectReader
from statedir.history import commit_log, path_trees, verify
from statedir.history.snapshot import CommitReader
from tests.support.history import forge, listings_read, other_commits, packed_without_graph
from tests.support.util import cli

SPEC = "state/runs/r1"
RAW = ["--raw", "--no-renames", "--no-abbrev", "-z", "--format=%x1e%H"]


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, input=stdin).stdout


def gits_raw(repo: Path, shas: list[str]) -> dict[str, list[tuple[str, ...]]]:
    """What `git log --raw -- SPEC` prints for each of `shas` it keeps: (path, modes, ids, status)."""
    out = git(repo, "log", "--no-walk=unsorted", "--stdin", *RAW, "--", SPEC, stdin="".join(f"{s}\n" for s in shas))
    found = {}
    for record in out.split("\x1e")[1:]:
        sha, _, raw = record.partition("\n")
        tokens = raw.lstrip("\n").split("\0")
        found[sha.strip("\0")] = [(path, *meta[1:].split()) for meta, path in zip(tokens[0::2], tokens[1::2],
                                                                                   strict=False) if meta]
    return found


def test_the_changes_are_gits_raw_diff_whatever_was_edited(sd: api.StateDir, repo: Path) -> None:
    rng = random.Random(37)
    run = repo / SPEC
    run.mkdir(parents=True)
    names = ["a", "b", "sub/c", "sub/d", "sub/deep/e", "x-1", "x", "x/f", "x0"]

    def commit(message: str = "c") -> None:
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", message)

    def edit() -> None:
        target = run / rng.choice(names)
        run.mkdir(parents=True, exist_ok=True)
        op = rng.choice(["write", "write", "delete", "chmod", "link", "folder", "other"])
        if op == "other":
            (repo / "other").mkdir(exist_ok=True)
            (repo / "other" / "f").write_text(f"{rng.random()}\n")
            return
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)  # a folder becomes a file (or goes)
            if op == "delete":
                return
        for parent in target.relative_to(run).parents:
            if (run / parent).is_file() or (run / parent).is_symlink():
                (run / parent).unlink()  # a file becomes a folder
        target.parent.mkdir(parents=True, exist_ok=True)
        if op == "delete" and (target.exists() or target.is_symlink()):
            target.unlink()
        elif op == "chmod" and target.is_file() and not target.is_symlink():
            target.chmod(target.stat().st_mode ^ 0o111)
        elif op == "link":
            target.unlink(missing_ok=True)
            os.symlink(rng.choice(["a", "b", "nowhere"]), target)
        elif op == "folder":
            target.unlink(missing_ok=True)
            target.mkdir()
            (target / "inside").write_text(f"{rng.random()}\n")
        else:
            if target.is_symlink():
                target.unlink()
            target.write_text(f"{rng.random()}\n")

    main = git(repo, "symbolic-ref", "--short", "HEAD").strip()
    for step in range(50):
        op = rng.choice(["edit", "edit", "edit", "gone", "merge", "orphan"])
        if op == "edit":
            for _ in range(rng.randrange(1, 4)):
                edit()
            commit()
        elif op == "gone" and run.exists():
            shutil.rmtree(run)
            commit("the run's folder gone")
            run.mkdir(parents=True)
        elif op == "merge":
            git(repo, "checkout", "-q", "-b", f"side{step}")
            edit()
            commit("side")
            git(repo, "checkout", "-q", "-f", main)
            edit()
            commit()
            merged = subprocess.run(["git", "merge", "-q", "--no-edit", "-X", "theirs", f"side{step}"], cwd=repo,
                                    capture_output=True)
            if merged.returncode:  # a file against a folder: the merge taken as the work tree holds it
                commit("merged by hand")
        elif op == "orphan":  # a root commit holding the folder
            git(repo, "checkout", "-q", "--orphan", f"root{step}")
            edit()
            commit("root")
            git(repo, "checkout", "-q", "-f", main)
            git(repo, "clean", "-qfd")
    listed = [line.split() for line in git(repo, "log", "--all", "--format=%H %P").splitlines()]
    shas = [sha for sha, *_ in listed]
    with ObjectReader(repo) as objs:
        found = path_trees.changes(sd.store, objs, SPEC, [(sha, parents) for sha, *parents in listed])
        again = path_trees.changes(sd.store, objs, SPEC, [(sha, parents) for sha, *parents in listed])
    assert found is not None and again == found  # the second from the remembered trees
    theirs = gits_raw(repo, shas)
    ours = {sha: [(path, old, new, a, b, status) for path, old, new, a, b, status in changes]
            for sha, changes in found[0].items()}
    assert {sha: ours[sha] for sha in theirs} == theirs
    assert all(not ours[sha] for sha in shas if sha not in theirs)  # git keeps every commit that changed it
    kinds = {change[-1] for changes in theirs.values() for change in changes}
    assert kinds == {"A", "D", "M", "T"}, kinds  # every kind of change was met
    assert sum(len(parents) > 1 for _, *parents in listed) >= 3 and sum(not parents for _, *parents in listed) >= 2
    held = git(repo, "cat-file", "--batch-check", stdin="".join(f"{sha}:{SPEC}\n" for sha in shas)).splitlines()
    assert {sha: found[1][sha] for sha in shas} == {sha: line.split()[0] if line.endswith(tuple("0123456789")) else None
                                                     for sha, line in zip(shas, held, strict=True)}
    assert sum(tree is None for tree in found[1].values()) >= 2  # the folder absent at some


def test_a_file_where_the_folder_was_is_left_to_gits_diff(sd: api.StateDir, repo: Path) -> None:
    (repo / "state/runs").mkdir(parents=True, exist_ok=True)
    (repo / SPEC).write_text("a file\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a file")
    sha = git(repo, "rev-parse", "HEAD").strip()
    parent = git(repo, "rev-parse", "HEAD~1").strip()
    with ObjectReader(repo) as objs:
        assert path_trees.changes(sd.store, objs, SPEC, [(sha, [parent])]) is None
        assert path_trees.changes(sd.store, objs, "state/runs/r*", [(sha, [parent])]) is None


def test_verify_run_reads_no_listing_of_runs_once_its_trees_are_remembered(sd: api.StateDir, repo: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    sd.new("r1", topic="mine")
    sd.new("r2", topic="other")
    other_commits(repo, 20)
    for n in range(4):
        sd.set("r1", "topic", f"mine {n}", reason="t")
        sd.set("r2", "topic", f"other {n}", reason="t")
    state = repo / SPEC / "state.yaml"
    state.write_text(state.read_text().replace("language: en", "language: de"))
    git(repo, "commit", "-qam", "by hand")
    forge(repo, {"runs/r1/stages/1.yaml": b"status: done\n"}, action="stage", run="r1")
    packed_without_graph(repo)
    trace = repo.parent / "pack-access.txt"

    def verified() -> tuple[int, str]:
        trace.unlink(missing_ok=True)
        proc = cli("verify", "r1", "--json", cwd=repo, env={"GIT_TRACE_PACK_ACCESS": str(trace)})
        assert proc.returncode == 1, proc.stderr  # the hand edit and the forgery
        return listings_read(repo, trace), proc.stdout

    first, out = verified()
    second, again = verified()
    assert again == out
    assert first >= 7, first  # each of the run's commits (and parents) looked up through runs/, once
    assert second == 0
    kinds = sorted(f["kind"] for f in json.loads(out)["findings"])
    assert kinds == ["hand_edit", "illegal"], kinds
    with ObjectReader(repo) as objs:  # the commits as read by the run's trees, and by git's diff
        assert commit_log.commits(sd.store, SPEC, None, reader=CommitReader(sd.store, objs)) == \
            commit_log.commits(sd.store, SPEC, None)
    for remembered in sd.store.cache_dir.glob("trees/*.json"):
        remembered.unlink()
    monkeypatch.setattr(path_trees, "changes", lambda *a: None)  # git's own diff (`log --raw`), as before
    assert verify.verify(sd.store, "r1") == json.loads(out)

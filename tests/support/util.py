"""What the tests share that is not a fixture: the real CLI as a subprocess or in this process, a store's
bytes, repositories built once and copied, and the runs driven to a stage through the API."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

import statedir
from statedir import api
from tests.support.isolation import isolated_at

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

_BUILT: dict[str, tuple[Path, Any]] = {}


def copy_of(name: str, build: Callable[[api.StateDir], T], repo: Path,
            factory: pytest.TempPathFactory) -> tuple[api.StateDir, T]:
    """`repo` (the test's work dir) made a copy of a repository whose new store `build` filled
    through the API: built once per test process for each `name` (one per build, a folder name:
    "<module>-<state>"), and copied into each test that starts from it
    rather than built again for each. Returns the copy's store and what `build` returned (the
    ids it made, say)."""
    import shutil

    if name not in _BUILT:
        root = factory.mktemp(f"built-{name}")
        with isolated_at(root):
            subprocess.run(["git", "init", "-q", str(root / "work")], check=True)
            api.init(root / "work" / "state")
            made = build(statedir.open(root / "work" / "state"))
        _BUILT[name] = (root / "work", made)
    built, made = _BUILT[name]
    shutil.copytree(built, repo, symlinks=True, dirs_exist_ok=True)
    return statedir.open(repo / "state"), made


_LARGE: dict[str, Path] = {}


_LARGE_COPIES: list[Path] = []


def make_large(repo: Path) -> Path:
    """Give `repo` (just made by `git init`) 14,000 committed empty files: the repository's index
    grows past the size above which statedir commits with plumbing instead of `git commit --only`.
    Built once per test process and copied: its .git copied, the empty files hard-linked (git never
    writes into a work tree file, it replaces it, so no test can change the ones it shares)."""
    import shutil
    import tempfile

    from statedir.gitops import store_commit

    if "large" not in _LARGE:  # in the test run's own folder: on the file system the copies hard-link into
        built = Path(tempfile.mkdtemp(prefix="statedir-large-", dir=repo.parent.parent))
        subprocess.run(["git", "init", "-q", str(built)], check=True)
        bulk = built / "bulk"
        bulk.mkdir()
        for n in range(14_000):
            (bulk / f"f{n:05d}").write_bytes(b"")
        subprocess.run(["git", "add", "bulk"], cwd=built, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "bulk"], cwd=built, check=True)
        _LARGE["large"] = built
    built = _LARGE["large"]
    shutil.rmtree(repo / ".git")
    _LARGE_COPIES.append(repo)
    subprocess.run(["cp", "-a", str(built / ".git"), str(repo / ".git")], check=True)
    subprocess.run(["cp", "-al", str(built / "bulk"), str(repo / "bulk")], check=True)
    assert (repo / ".git" / "index").stat().st_size > store_commit.PLUMBING_INDEX_BYTES
    return repo


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI as a subprocess, started as the `statedir` console script starts it: -P keeps
    the current folder off sys.path (a repository may hold a folder named statedir). `timeout` only
    stops a hung call: it asserts no speed."""
    return subprocess.run([sys.executable, "-P", "-m", "statedir", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, input=stdin, timeout=timeout)


def cli_json(*args: str, **kwargs: object) -> tuple[int, object]:
    proc = cli(*args, "--json", **kwargs)  # type: ignore[arg-type]
    return proc.returncode, json.loads(proc.stdout)


def snapshot(root: Path, objects: bool = True) -> dict[str, bytes]:
    """Every file under a work tree (git objects included) with its bytes; the lock file and
    statedir's disposable caches and private index in .git/statedir aside. With objects=False,
    for a git command that failed half way: git's object store (where it leaves unreachable
    blobs) is left out and the index is compared by its entries, not its stat caches."""
    out = {}
    skipped = {os.path.join(".git", "statedir")} | (set() if objects else {os.path.join(".git", "objects")})
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) not in skipped]
        for name in files:
            path = os.path.join(folder, name)
            if name != ".statedir.lock" and os.path.isfile(path):
                with open(path, "rb") as f:
                    out[os.path.normpath(os.path.join(rel, name))] = f.read()
    out = dict(sorted(out.items()))
    if not objects and (root / ".git" / "index").exists():
        out[".git/index"] = subprocess.run(["git", "ls-files", "--stage"], cwd=root, capture_output=True,
                                           check=True).stdout
    return out


def call(args: list[str]) -> tuple[int, str, str]:
    """The CLI in this process (fast, for property tests over thousands of arguments)."""
    import io

    from statedir.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def today() -> str:
    """Today's UTC day: the name of the log segment a transition made now appends to."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def segment(name: str) -> str:
    """The run-relative path of log `name`'s segment for today."""
    return f"history/{name}/{today()}.yaml"


def on_terminal(args: list[str], cwd: Path, stream: str) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """The CLI with its `stream` ("stdout" or "stderr") on a pseudo-terminal: the process, and
    what the terminal showed; the other stream is captured."""
    import pty

    leader, follower = pty.openpty()
    other = "stderr" if stream == "stdout" else "stdout"
    proc = subprocess.run([sys.executable, "-m", "statedir", *args], cwd=cwd, timeout=120,
                          **{stream: follower, other: subprocess.PIPE})  # type: ignore[call-overload]
    os.close(follower)
    shown = b""
    with contextlib.suppress(OSError):  # EIO once the terminal's other end is closed and drained
        while chunk := os.read(leader, 65536):
            shown += chunk
    os.close(leader)
    return proc, shown.decode()


def diverge(repo: Path, rel: str) -> None:
    """Commit a change of the committed file `rel` on a new branch `side` and another on the
    current branch: merging `side` conflicts."""
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("checkout", "-q", "-b", "side")
    (repo / rel).write_text("side\n")
    git("commit", "-q", "-am", "side")
    git("checkout", "-q", "-")
    (repo / rel).write_text("main\n")
    git("commit", "-q", "-am", "main")


def stage_by_hand(repo: Path, run: str, stage: str, **fields: Any) -> Path:
    """A stage's file written by hand in the older, whole shape (every field: a stage that has
    said nothing has no file), with `fields` changed, and staged; returns its path."""
    from statedir.engine import runs, template
    from statedir.files import yaml
    from statedir.store import layout

    rel = f"runs/{run}/stages/{stage}.yaml"
    path = repo / "state" / rel
    t = template.load("academic-pipeline")
    record = yaml.to_plain(yaml.load(path.read_bytes())) if path.exists() else runs.new_stage(t, stage)
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.dump({**record, **fields}, layout.schema_ref(rel, "academic-pipeline/3.24")))
    subprocess.run(["git", "add", str(path)], cwd=repo, check=True)
    return path


def stage_one_done(sd: api.StateDir, run: str, topic: str = "t", *, settings: list[str] | None = None,
                   mode: str | None = None) -> None:
    """A new academic run (with `settings`) whose stage 1 (in `mode`) has its materials and is
    completed: its FULL checkpoint open."""
    sd.new(run, topic=topic, settings=settings)
    sd.stage(run, "1", "in_progress", mode=mode)
    sd.material(run, ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"])
    sd.stage(run, "1", "completed")


def past_stage_one(sd: api.StateDir, run: str, topic: str = "t", *, settings: list[str] | None = None,
                   mode: str | None = None) -> None:
    """A new academic run with stage 1 done and its checkpoint answered: stage 2 in progress."""
    stage_one_done(sd, run, topic, settings=settings, mode=mode)
    sd.confirm(run, response="continue")


CLEAR_ITEMS = [f"{mode}=CLEAR" for mode in range(1, 8)]  # a failure-mode checklist that finds nothing
CLEAR_ARGS = [arg for item in CLEAR_ITEMS for arg in ("--item", item)]  # ... as the CLI takes it


def clear_checklist(sd: api.StateDir, run: str, stage: str = "2.5") -> None:
    """The integrity stage's failure-mode checklist, every mode CLEAR (it must stand before the stage completes)."""
    sd.checklist(run, stage, CLEAR_ITEMS, actor="integrity_verification")


def to_integrity(sd: api.StateDir, run: str, stage: str = "2.5", *, topic: str = "t",
                 settings: list[str] | None = None, mode: str | None = None, draft: list[str] | None = None) -> None:
    """Stage 2 written (its draft with the `draft` files) and confirmed: stage 2.5 in progress (or,
    with "4.5", through an accept)."""
    past_stage_one(sd, run, topic, settings=settings, mode=mode)
    sd.material(run, ["paper_draft"], files=draft)
    sd.stage(run, "2", "completed")
    sd.confirm(run, response="continue")
    if stage == "4.5":
        sd.integrity(run, "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
        clear_checklist(sd, run)
        sd.stage(run, "2.5", "completed")
        sd.confirm(run, response="continue")
        sd.material(run, ["review_reports"])
        sd.stage(run, "3", "completed", decision="accept")
        sd.confirm(run, response="continue")


def at_mandatory_2_5(sd: api.StateDir) -> None:
    """Run p entered at 2.5 with its PASS recorded and the stage completed: its MANDATORY checkpoint open."""
    sd.new("p", topic="T", entry_point="2.5")
    sd.material("p", ["paper_draft"])
    sd.stage("p", "2.5", "in_progress")
    sd.integrity("p", "2.5", "PASS", refs_total=1, refs_verified=1, actor="integrity_verification")
    clear_checklist(sd, "p")
    sd.stage("p", "2.5", "completed")


def trailers(repo: Path, rev: str = "HEAD") -> dict[str, str]:
    """The commit's trailers, one value per key (the last where a key repeats)."""
    out = subprocess.run(["git", "log", "-1", "--format=%(trailers:only,unfold)", rev], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split(": ", 1) for line in out.splitlines() if line)


def contract_holds(sd: api.StateDir, run: str, exit_code: int = 0) -> dict[str, Any]:
    """Stage 3''s re-review contract recorded (files under rr/ in the store's work tree) and its
    synthesis check given `exit_code`: what a decision at 3' needs on academic-pipeline 3.22; on
    3.23 the traceability file registered too (re_review_traceability: its row bound). Returns the
    last transition's result (its commit is the run's head)."""
    folder = sd.store.files_worktree / "rr" / run
    folder.mkdir(parents=True, exist_ok=True)
    for part in ("manifest", "criteria", "evidence", "claims", "check"):
        (folder / f"{part}.md").write_text(f"{part} of the re-review of {run}\n")
        if part != "check":
            sd.contract(run, "3p", part, file=str(folder / f"{part}.md"))
    result = sd.contract(run, "3p", "check", file=str(folder / "check.md"), exit_code=exit_code)
    from statedir.engine import template

    shipped = template.load(str(sd.get(run, "template")))
    if shipped.doc.get("version") == sd.get(run, "template_version") and "re_review_traceability" in shipped.materials:
        (folder / "traceability.json").write_text('{"previously_missed": [], "indeterminate": []}\n')
        result = sd.material(run, ["re_review_traceability"], files=[str(folder / "traceability.json")])
    return result


def cli_refused(repo: Path, code: str, *args: str) -> dict[str, Any]:
    """The CLI run in `repo` refused with `code` (exit 2 for INVALID_VALUE, else 1), the store
    byte-identical; the error document."""
    before = snapshot(repo)
    status, out = cli_json(*args, cwd=repo)
    assert status == (2 if code == "INVALID_VALUE" else 1) and out["error"]["code"] == code, out  # type: ignore[index]
    assert snapshot(repo) == before
    return out["error"]  # type: ignore[index,no-any-return]


def own_template(folder: Path, name: str, *edits: tuple[str, str]) -> Path:
    """The shipped linear template renamed mypipe, with each (old, new) of `edits` made once (old must
    be there), written to folder/name: a user's own template."""
    text = (ROOT / "templates" / "linear.yaml").read_text().replace("name: linear", "name: mypipe")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = folder / name
    path.write_text(text)
    return path


def shim(repo: Path) -> Path:
    """A folder with a `statedir` executable that runs this checkout's statedir."""
    bindir = repo.parent / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "statedir").write_text(f'#!/bin/sh\nexec {sys.executable} -m statedir "$@"\n')
    (bindir / "statedir").chmod(0o755)
    return bindir


def tracked(repo: Path, name: str, text: str) -> str:
    """`name` written with `text` in the work tree of `repo` and staged (a file an argument may name)."""
    (repo / name).write_text(text)
    subprocess.run(["git", "add", name], cwd=repo, check=True)
    return name

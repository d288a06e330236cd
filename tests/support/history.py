"""Shared pieces for the history tests: a scripted academic run through the Python API,
and git run by hand (the way a user would edit, revert or forge)."""
from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statedir import api
from tests.support.util import CLEAR_ITEMS, contract_holds

if TYPE_CHECKING:
    import pytest

ORCH, INTEGRITY = "pipeline_orchestrator", "integrity_verification"


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                          input=stdin).stdout


def script(draft: Path) -> list[Callable[[api.StateDir], dict[str, Any]]]:
    """The academic pipeline, start to finish: each step one transition of run p1."""
    draft.write_text("draft\n")
    return [
        lambda sd: sd.new("p1", topic="AI and QA"),
        lambda sd: sd.stage("p1", "1", "in_progress", turns="#1..#2"),
        lambda sd: sd.material("p1", ["rq_brief", "methodology_blueprint", "bibliography", "synthesis_report"]),
        lambda sd: sd.stage("p1", "1", "completed", turns="#1..#15", reason="research is enough"),
        lambda sd: sd.confirm("p1"),
        lambda sd: sd.material("p1", ["paper_draft"], files=[str(draft)], upstream=["research_v1"]),
        lambda sd: sd.stage("p1", "2", "completed"),
        lambda sd: sd.confirm("p1", response="just-continue"),
        lambda sd: sd.integrity("p1", "2.5", "FAIL", refs_total=62, refs_verified=50, actor=INTEGRITY),
        lambda sd: sd.material("p1", ["paper_draft"], files=[str(draft)], upstream=["research_v1"]),
        # the PASS and the failure-mode checklist (one step, so the later steps keep their numbers)
        lambda sd: (sd.integrity("p1", "2.5", "PASS", refs_total=62, refs_verified=62, actor=INTEGRITY),
                    sd.checklist("p1", "2.5", CLEAR_ITEMS, actor=INTEGRITY))[-1],
        lambda sd: sd.stage("p1", "2.5", "completed"),
        lambda sd: sd.confirm("p1", response="continue"),
        lambda sd: sd.pipeline("p1", "paused", reason="lunch"),
        lambda sd: sd.pipeline("p1", "running"),
        lambda sd: sd.material("p1", ["review_reports"]),
        lambda sd: sd.material("p1", ["revision_roadmap"]),
        lambda sd: sd.stage("p1", "3", "completed", decision="major_revision"),
        lambda sd: sd.confirm("p1", response="continue"),
        lambda sd: sd.material("p1", ["revised_draft"], files=[str(draft)]),
        lambda sd: sd.revision("p1", items_total=5, items_addressed=5),
        lambda sd: sd.stage("p1", "4", "completed"),
        lambda sd: sd.confirm("p1"),
        lambda sd: sd.material("p1", ["re_review_report"]),
        lambda sd: contract_holds(sd, "p1"),
        lambda sd: sd.stage("p1", "3'", "completed", decision="minor_revision"),
        lambda sd: sd.confirm("p1", response="continue"),
        lambda sd: (sd.integrity("p1", "4.5", "PASS", refs_total=62, refs_verified=62, actor=INTEGRITY),
                    sd.checklist("p1", "4.5", CLEAR_ITEMS, actor=INTEGRITY))[-1],
        lambda sd: sd.stage("p1", "4.5", "completed"),
        lambda sd: sd.confirm("p1", response="continue", format="apa7"),
        lambda sd: sd.material("p1", ["final_paper"]),
        lambda sd: sd.stage("p1", "5", "completed"),
        lambda sd: sd.confirm("p1"),
        lambda sd: sd.confirm("p1", response="done"),
    ]


def drive(sd: api.StateDir, draft: Path, steps: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Run the script (its first `steps` steps); returns each commit with `show` as printed then."""
    seen = []
    for step in script(draft)[:steps]:
        result = step(sd)
        seen.append((result["commit"], sd.show("p1")))
    return seen


def driven_copy(repo: Path, factory: pytest.TempPathFactory, steps: int | None = None) -> api.StateDir:
    """`repo` (the test's work dir) made a copy of a repository whose new store has run p1 driven
    through the script's first `steps` steps (the draft beside it): driven once per test process
    for each `steps` (util.copy_of) rather than again for each test."""
    from tests.support.util import copy_of

    return copy_of(f"driven-{steps}", lambda sd: drive(sd, sd.store.root.parent / "draft.md", steps), repo,
                   factory)[0]


def hand_commit(repo: Path, message: str = "edit by hand") -> str:
    git(repo, "commit", "-q", "-a", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def forge(repo: Path, files: dict[str, bytes | None], *, action: str, run: str = "-", actor: str = ORCH,
          request: dict[str, Any] | None = None, store: str = "state", sign: Path | None = None) -> str:
    """A commit made by hand that carries statedir's trailers (what anyone with push access
    can make): `files` are store-relative, None removes one; `sign` signs it with that SSH key."""
    from statedir.gitops import commit_message

    for rel, data in files.items():
        path = repo / store / rel
        if data is None:
            git(repo, "rm", "-q", "--", str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        git(repo, "add", "-f", "--", str(path))
    message = commit_message.message(f"{action} (forged)", run, actor, action, request=request)
    signing = ["-c", "gpg.format=ssh", "-c", f"user.signingKey={sign}"] if sign else []
    git(repo, *signing, "commit", "-q", *(["-S"] if sign else []), "-F", "-", stdin=message)
    return git(repo, "rev-parse", "HEAD").strip()


def other_commits(repo: Path, count: int) -> None:
    """`count` commits beside the store (a user's files), by git fast-import."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    chunks = []
    for n in range(count):
        message, content = f"user commit {n}\n".encode(), f"{n}\n".encode()
        chunks.append(b"commit HEAD\ncommitter u <u@x> %d +0000\n" % (1700000000 + n)
                      + b"data %d\n%s" % (len(message), message) + (f"from {head}\n".encode() if n == 0 else b"")
                      + b"M 100644 inline notes.txt\ndata %d\n%s\n" % (len(content), content))
    branch = subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, check=True,
                   input=b"".join(chunks).replace(b"commit HEAD\n", f"commit {branch}\n".encode()))
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=repo, check=True)


def packed_without_graph(repo: Path) -> None:
    """Every object packed and no commit-graph: each object git then reads is a pack access."""
    git(repo, "-c", "gc.writeCommitGraph=false", "gc", "-q")
    for graph in (repo / ".git/objects/info").glob("commit-graph*"):
        if graph.is_dir():
            for part in graph.iterdir():
                part.unlink()
            graph.rmdir()
        else:
            graph.unlink()


def listings_read(repo: Path, trace: Path, folder: str = "state/runs") -> int:
    """How many times git read (from its packs, as `GIT_TRACE_PACK_ACCESS` wrote to `trace`) the
    tree of `folder` (default: the listing of every run) of any commit: each such tree, packed
    first (packed_without_graph), is one read."""
    commits = git(repo, "rev-list", "--all").split()
    found = git(repo, "cat-file", "--batch-check", stdin="".join(f"{c}:{folder}\n" for c in commits))
    listings = {parts[0] for parts in map(str.split, found.splitlines()) if len(parts) == 3 and parts[1] == "tree"}
    at: dict[tuple[str, str], str] = {}  # (pack file name, offset) -> object id
    for index in (repo / ".git/objects/pack").glob("*.idx"):
        shown = subprocess.run(["git", "show-index"], cwd=repo, input=index.read_bytes(), capture_output=True,
                               check=True).stdout.decode()
        for line in shown.splitlines():
            offset, sha = line.split()[:2]
            at[(index.with_suffix(".pack").name, offset)] = sha
    lines = trace.read_text().splitlines() if trace.exists() else []
    return sum(at.get((Path(line.split()[-2]).name, line.split()[-1])) in listings for line in lines)

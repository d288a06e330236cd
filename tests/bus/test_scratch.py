"""`bus init --clean DIR` through the real CLI: it removes only what git ignores in the scratch
folder, and refuses, changing nothing, a folder holding a repository or files git does not
ignore."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from statedir import api
from tests.support.util import cli, snapshot

S = "2026-06-30-member-blog-gating"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def scratch(repo: Path, sd: api.StateDir) -> Path:
    """A store, and the seed's scratch folder: `.ai_log/` ignored but for a tracked `.gitkeep`."""
    (repo / ".gitignore").write_text("/.ai_log/*\n!/.ai_log/.gitkeep\n")
    (repo / ".ai_log").mkdir()
    (repo / ".ai_log" / ".gitkeep").write_text("")
    git(repo, "add", ".gitignore", ".ai_log/.gitkeep")
    git(repo, "commit", "-qm", "the scratch folder")
    (repo / ".ai_log" / "phase-1.md").write_text("stale evidence")
    return repo / ".ai_log"


def _refused(repo: Path, *words: str) -> dict[str, object]:
    before = snapshot(repo)
    proc = cli("bus", "init", S, "--clean", ".ai_log", "--json", cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "INVALID_VALUE" and all(w in error["message"] for w in words), error
    assert snapshot(repo) == before
    assert not (repo / "state" / "bus" / f"{S}.yaml").exists()
    return error  # type: ignore[no-any-return]


@pytest.mark.parametrize("where", ["inside", "deep", "itself"])
def test_a_scratch_folder_holding_a_repository_is_refused(repo: Path, scratch: Path, where: str) -> None:
    nested = {"inside": scratch / "checkout", "deep": scratch / "a" / "b" / "checkout", "itself": scratch}[where]
    nested.mkdir(parents=True, exist_ok=True)
    git(nested, "init", "-q")
    (nested / "work.py").write_text("an agent's clone, with its own history\n")
    git(nested, "add", "work.py")
    git(nested, "commit", "-qm", "work")
    error = _refused(repo, "git repository", "never deletes one")
    assert error["details"]["repository"].endswith(".git")  # type: ignore[index]


def test_a_scratch_folder_with_files_git_does_not_ignore_is_refused(repo: Path, scratch: Path) -> None:
    (repo / ".gitignore").write_text("/.ai_log/*.md\n")
    git(repo, "commit", "-qam", "only the evidence is ignored")
    (scratch / "notes.txt").write_text("mine, neither tracked nor ignored\n")
    (scratch / "drafts").mkdir()
    (scratch / "drafts" / "plan.txt").write_text("mine too\n")
    error = _refused(repo, "does not ignore", "notes.txt", "drafts/plan.txt", "hasbrains-agent-kit's .gitignore")
    assert "seed" not in error["message"]  # type: ignore[operator]
    assert error["details"]["unignored"] == ["drafts/plan.txt", "notes.txt"]  # type: ignore[index]
    assert (scratch / "phase-1.md").exists()  # the ignored file is not removed either: nothing changed


def test_clean_removes_what_git_ignores_and_nothing_else(repo: Path, scratch: Path) -> None:
    (scratch / "sub").mkdir()
    (scratch / "sub" / "deep.log").write_text("stale")
    (scratch / "empty").mkdir()
    (repo / "precious.txt").write_text("keep me")
    (scratch / "link").symlink_to(repo / "precious.txt")
    proc = cli("bus", "init", S, "--clean", ".ai_log", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["cleaned"] == ["empty", "link", "phase-1.md", "sub"]
    assert sorted(p.name for p in scratch.iterdir()) == [".gitkeep"]
    assert (repo / "precious.txt").read_text() == "keep me"
    # ignored as a whole folder (`.ai_log/`), with an untracked .gitkeep: all but .gitkeep go
    (repo / ".gitignore").write_text(".ai_log/\n")
    git(repo, "rm", "-q", "--cached", ".ai_log/.gitkeep")
    git(repo, "commit", "-qam", "the whole folder ignored")
    (scratch / "phase-2.md").write_text("stale")
    proc = cli("bus", "init", S, "--clean", ".ai_log", "--json", cwd=repo)
    assert proc.returncode == 0 and json.loads(proc.stdout)["cleaned"] == ["phase-2.md"], proc.stdout + proc.stderr
    assert sorted(p.name for p in scratch.iterdir()) == [".gitkeep"]

"""The hooks on a store on a branch of its own (`init --branch`): statedir's own in the store's work
tree, the user's real pre-commit framework in the user's, against a real bare remote."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.branch import B, git, user_repo, with_remote
from tests.support.util import cli, cli_json

USERS_CONFIG = """\
repos:
  - repo: local
    hooks:
      - id: no-todo
        name: no TODO in notes
        entry: TODO
        language: pygrep
        files: '\\.md$'
      - id: statedir-verify
        name: statedir verify
        entry: statedir verify --pushed
        language: system
        pass_filenames: false
        always_run: true
        stages: [pre-push]
"""


def env() -> dict[str, str]:
    """`statedir` and `pre-commit` of this environment on PATH, as where the user commits."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env(), timeout=300)


def hooked_repo(repo: Path, *hook_types: str) -> Path:
    """The user's repository with their own pre-commit config, hooks installed, the store on B."""
    user_repo(repo)
    (repo / ".pre-commit-config.yaml").write_text(USERS_CONFIG)
    git(repo, "add", ".pre-commit-config.yaml", "notes.md")
    git(repo, "commit", "-q", "-m", "the user's hooks")
    for hook_type in hook_types:
        assert run(repo, "pre-commit", "install", "--hook-type", hook_type).returncode == 0
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    assert cli_json("new", "r1", "--topic", "x", cwd=repo)[0] == 0
    return repo


@pytest.mark.slow  # pre-commit builds its environments once per test's HOME
def test_pre_commit_validates_hand_edits_in_the_stores_work_tree(repo: Path) -> None:
    hooked_repo(repo, "pre-commit")
    state = repo / "state"
    assert git(repo, "ls-tree", "--name-only", B, ".pre-commit-config.yaml") == ""  # no hook config on B
    assert git(repo, "status", "--porcelain") == ""
    run_file = state / "runs" / "r1" / "state.yaml"
    good = run_file.read_text()
    run_file.write_text(good.replace("topic: x", "topic: [not, a, string]"))
    refused = run(state, "git", "commit", "-qam", "a broken hand edit")  # statedir's own hook refuses it
    assert refused.returncode != 0 and "runs/r1/state.yaml" in refused.stdout + refused.stderr, refused
    head = git(repo, "rev-parse", B)
    run_file.write_text(good.replace("topic: x", "topic: by hand"))
    passed = run(state, "git", "commit", "-qam", "a valid hand edit")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert git(repo, "rev-parse", f"{B}~1") == head
    # the user's own commits: their config, their hooks, nothing of the store's
    (repo / "notes.md").write_text("TODO\n")
    assert run(repo, "git", "commit", "-qam", "a todo").returncode != 0  # their hook runs
    (repo / "notes.md").write_text("done\n")
    mine = run(repo, "git", "commit", "-qam", "my work")
    assert mine.returncode == 0 and "statedir" not in mine.stdout, mine
    assert git(repo, "rev-list", "--count", "main") == "3" and git(repo, "rev-list", "--count", B) == "3"


@pytest.mark.slow  # pre-commit and four real pushes
def test_the_pre_push_hook_verifies_only_the_store_commits_a_push_sends(repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    hooked_repo(repo, "pre-push")
    git(repo, "remote", "add", "origin", str(remote))
    state = repo / "state"
    pushed = run(state, "git", "push", "-q", "origin", B)  # the store's first push: all of it, clean
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    run_file = state / "runs" / "r1" / "state.yaml"
    run_file.write_text(run_file.read_text().replace("topic: x", "topic: by hand"))
    git(state, "commit", "-qam", "a hand edit")
    refused = run(state, "git", "push", "-q", "origin", B)
    assert refused.returncode != 0 and "hand_edit" in refused.stdout + refused.stderr, refused
    assert git(remote, "rev-parse", B) != git(repo, "rev-parse", B)
    from_main = run(repo, "git", "push", "-q", "origin", B)  # the same push from the user's work tree
    assert from_main.returncode != 0 and "hand_edit" in from_main.stdout + from_main.stderr, from_main
    # the user's branch holds none of the store's commits: pushed, the finding in the store aside
    mine = run(repo, "git", "push", "-q", "origin", "main")
    assert mine.returncode == 0, mine.stdout + mine.stderr
    assert git(remote, "rev-parse", "main") == git(repo, "rev-parse", "main")
    # reviewed and pushed past the hook, the hand edit is on the remote: later pushes verify only theirs
    assert run(state, "git", "push", "-q", "--no-verify", "origin", B).returncode == 0
    assert cli_json("stage", "r1", "1", "in_progress", cwd=repo)[0] == 0
    later = run(state, "git", "push", "origin", B)
    assert later.returncode == 0, later.stdout + later.stderr
    assert git(remote, "rev-parse", B) == git(repo, "rev-parse", B)
    whole = cli("verify", cwd=repo)
    assert whole.returncode == 1 and "hand_edit" in whole.stdout  # what --pushed left aside is still there


@pytest.mark.slow  # pre-commit builds the hook's environment
def test_verify_pushed_reads_what_pre_commit_says_is_pushed(repo: Path) -> None:
    user_repo(repo)
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    first = cli_json("new", "r1", "--topic", "x", cwd=repo)[1]["commit"]  # type: ignore[index]
    run_file = repo / "state" / "runs" / "r1" / "state.yaml"
    run_file.write_text(run_file.read_text().replace("topic: x", "topic: by hand"))
    git(repo / "state", "commit", "-qam", "a hand edit")
    tip = git(repo, "rev-parse", B)
    cases = [({"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main"}, 0, 0),
             ({"PRE_COMMIT_LOCAL_BRANCH": "refs/tags/v1"}, 0, 0),
             ({"PRE_COMMIT_LOCAL_BRANCH": f"refs/heads/{B}", "PRE_COMMIT_FROM_REF": tip,
               "PRE_COMMIT_TO_REF": tip}, 0, 0),
             ({"PRE_COMMIT_LOCAL_BRANCH": f"refs/heads/{B}", "PRE_COMMIT_FROM_REF": first,
               "PRE_COMMIT_TO_REF": tip}, 1, 1),
             ({"PRE_COMMIT_LOCAL_BRANCH": "HEAD", "PRE_COMMIT_FROM_REF": first, "PRE_COMMIT_TO_REF": tip}, 1, 1),
             ({"PRE_COMMIT_LOCAL_BRANCH": f"refs/heads/{B}"}, 1, 3),  # a new branch: all of it
             ({}, 1, 3)]
    for given, code, checked in cases:
        proc = cli("verify", "--pushed", "--json", cwd=repo, env=given)
        assert proc.returncode == code, (given, proc.stdout, proc.stderr)
        assert json.loads(proc.stdout)["checked"] == checked, (given, proc.stdout)


@pytest.mark.slow  # several clones and a remote, each step through the CLI
def test_sync_reaches_a_remote_given_as_a_path_relative_to_the_users_work_tree(repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    user_repo(repo)
    git(repo, "remote", "add", "origin", "../remote.git")  # as the user sees it from their work tree
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    cli_json("new", "r1", "--topic", "x", cwd=repo)
    code, synced = cli_json("sync", cwd=repo / "state")
    assert code == 0 and synced["status"] == "pushed", synced  # type: ignore[index]
    assert git(remote, "rev-parse", B) == git(repo, "rev-parse", B)
    assert not (repo / "remote.git").exists() and not (repo / "state" / "remote.git").exists()
    git(tmp_path, "clone", "-q", "--branch", B, str(remote), "other")  # another machine moves the store on
    other = tmp_path / "other"
    assert cli_json("stage", "r1", "1", "in_progress", cwd=other)[0] == 0
    git(other, "push", "-q", "origin", B)
    code, fetched = cli_json("sync", cwd=repo)
    assert code == 0 and fetched["status"] == "fast_forward", fetched  # type: ignore[index]
    assert git(repo, "rev-parse", B) == git(remote, "rev-parse", B)


@pytest.mark.slow  # two clones, a sync
def test_init_branch_in_a_clone_made_before_the_store_was_pushed_takes_the_remotes(repo: Path,
                                                                                   tmp_path: Path) -> None:
    remote = with_remote(repo, tmp_path / "remote.git")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))  # before the store's branch exists anywhere
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    cli_json("new", "a1", "--topic", "from A", cwd=repo)
    assert cli_json("sync", cwd=repo)[0] == 0
    assert git(other, "branch", "-a", "--list", f"*{B}") == ""  # never fetched there
    code, attached = cli_json("init", "--branch", B, cwd=other)
    assert code == 0 and attached["attached"] is True and attached["created"] is False, attached  # type: ignore[index]
    assert git(other, "rev-parse", B) == git(remote, "rev-parse", B)
    assert [r["run_id"] for r in cli_json("runs", cwd=other)[1]] == ["a1"]  # type: ignore[index]
    cli_json("new", "b1", "--topic", "from B", cwd=other)
    code, synced = cli_json("sync", cwd=other)  # one history: sync takes it, as it refused two
    assert code == 0 and synced["status"] == "pushed", synced  # type: ignore[index]


def test_init_branch_makes_a_store_with_a_warning_where_the_remote_cannot_be_asked(repo: Path,
                                                                                   tmp_path: Path) -> None:
    user_repo(repo)
    git(repo, "remote", "add", "origin", str(tmp_path / "gone.git"))
    code, made = cli_json("init", "--branch", B, cwd=repo)
    assert code == 0 and made["created"] is True, made  # type: ignore[index]
    assert any("could not ask remote origin" in w for w in made["warnings"]), made  # type: ignore[index]
    git(repo, "config", "--remove-section", "statedir")  # unbound, as a second binding's refusal says
    proc = cli("init", "elsewhere", "--branch", "other-state", cwd=repo)
    assert "could not ask remote origin" in proc.stderr, proc.stderr


def test_a_remote_branch_without_a_store_is_refused_and_forgotten(repo: Path, tmp_path: Path) -> None:
    with_remote(repo, tmp_path / "remote.git", push=False)
    git(repo, "push", "-q", "origin", f"main:refs/heads/{B}")  # a branch NAME of code, not a store ...
    git(repo, "update-ref", "-d", f"refs/remotes/origin/{B}")  # ... that this clone has not fetched
    code, out = cli_json("init", "--branch", B, cwd=repo)
    assert code == 2 and "holds no statedir store" in out["error"]["message"], out  # type: ignore[index]
    assert git(repo, "for-each-ref", "refs/remotes") == "" and not (repo / "state").exists()


def test_sync_names_the_pre_push_hooks_findings_and_the_way_on(repo: Path, tmp_path: Path) -> None:
    """A push statedir's own pre-push verify refuses: sync says which hook, what it found and how to go
    on, as a rule refusal (exit 1); acknowledged, the next sync pushes."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    user_repo(repo)
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    assert cli_json("new", "r1", "--topic", "x", cwd=repo)[0] == 0
    git(repo, "remote", "add", "origin", str(remote))
    assert cli_json("sync", cwd=repo)[0] == 0
    run_file = repo / "state" / "runs" / "r1" / "state.yaml"
    run_file.write_text(run_file.read_text().replace("topic: x", "topic: by hand"))
    git(repo / "state", "commit", "-qam", "a hand edit")
    edit = git(repo, "rev-parse", B)
    code, out = cli_json("sync", cwd=repo)
    error = out["error"]  # type: ignore[index]
    assert code == 1 and error["code"] == "VALIDATION_FAILED", out
    assert "pre-push hook (statedir verify)" in error["message"] and "hand_edit" in error["message"]
    assert "statedir verify --acknowledge SHA --reason R" in error["message"]
    assert any(edit[:10] in f and "hand_edit" in f for f in error["details"]["findings"]), error
    assert git(remote, "rev-parse", B) != edit
    plain = cli("sync", cwd=repo)
    assert plain.returncode == 1 and "hand_edit" in plain.stderr and "Traceback" not in plain.stderr
    assert cli("verify", "--acknowledge", edit, "--reason", "the topic was corrected by hand on purpose",
               cwd=repo).returncode == 0
    code, synced = cli_json("sync", cwd=repo)
    assert code == 0 and synced["status"] == "pushed", synced  # type: ignore[index]

"""The hooks of a store on a branch of its own, against a hostile collaborator: a remote built with
plain git plants hook configuration on the store's branch, and the victim's clone, driven through
the CLI and plain git as a user would, never runs it (statedir.gitops.hooks); `init --branch`
verifies what it checks out (statedir.sync.verified); the docs' hook set-up leaves the user's own
branch working."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.branch import B, git
from tests.support.util import ROOT, cli, cli_json, snapshot

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI

HOOK_TYPES = ("pre-commit", "pre-push", "post-merge", "post-checkout", "commit-msg", "post-commit")


def env() -> dict[str, str]:
    """`statedir` and `pre-commit` of this environment on PATH, as where the user commits."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env(), timeout=300)


def planted(marker: Path) -> str:
    """A pre-commit config whose one hook, at every stage, leaves `marker` behind."""
    stages = ", ".join(HOOK_TYPES)
    return (f"repos:\n  - repo: local\n    hooks:\n      - id: helpful\n        name: helpful\n"
            f"        entry: touch {marker}\n        language: system\n        pass_filenames: false\n"
            f"        always_run: true\n        stages: [{stages}]\n")


def victim(base: Path) -> tuple[Path, Path]:
    """A bare remote, and a user's repository that installed the pre-commit framework for every hook
    type (as docs/branch.md once said) with a config of its own, made the store with `init --branch`
    and pushed it with `sync`."""
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", str(remote))
    repo = base / "victim"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-q", "-m", "the user's own hooks")
    git(repo, "remote", "add", "origin", str(remote))
    for hook_type in HOOK_TYPES:
        assert run(repo, "pre-commit", "install", "--hook-type", hook_type).returncode == 0
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    assert cli_json("new", "r1", "--topic", "x", cwd=repo)[0] == 0
    code, synced = cli_json("sync", cwd=repo, env=env())  # statedir on PATH, as where the user works
    assert code == 0 and synced["pushed"], synced  # type: ignore[index]
    return remote, repo


def collaborator(base: Path, remote: Path, files: dict[str, str], message: str = "helpful hooks") -> str:
    """A collaborator with push access: a plain clone of the store's branch, files committed by
    hand, pushed; the commit's sha."""
    clone = base / "mallory"
    if not clone.exists():
        git(base, "clone", "-q", "--branch", B, str(remote), str(clone))
    git(clone, "pull", "-q")
    for rel, text in files.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
        git(clone, "add", rel)
    git(clone, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", message)
    git(clone, "push", "-q", "origin", B)
    return git(clone, "rev-parse", "HEAD")


@pytest.mark.slow  # a remote, two clones, the pre-commit framework and real pushes
def test_a_hook_a_remote_plants_on_the_store_branch_never_runs(tmp_path: Path) -> None:
    remote, repo = victim(tmp_path)
    state = repo / "state"
    marker = tmp_path / "PWNED"
    bad = collaborator(tmp_path, remote, {".pre-commit-config.yaml": planted(marker)})
    pulled = run(state, "git", "pull", "-q", "--no-rebase", str(remote), B)  # the user takes it by hand
    assert pulled.returncode == 0, pulled.stderr
    assert (state / ".pre-commit-config.yaml").read_text() == planted(marker)
    assert not marker.exists(), "git pull in ./state ran a hook the remote planted"
    before = snapshot(repo, objects=False)
    code, refused = cli_json("sync", cwd=repo)  # verified from the last check, not from HEAD
    assert code == 1 and refused["error"]["code"] == "MERGE_REFUSED", refused  # type: ignore[index]
    finding = refused["error"]["details"]["findings"][0]  # type: ignore[index]
    assert (finding["commit"], finding["kind"], finding["file"]) == (bad, "illegal", ".pre-commit-config.yaml")
    assert bad[:10] in refused["error"]["message"]  # type: ignore[index]
    after = snapshot(repo, objects=False)
    assert {k for k in set(before) | set(after) if before.get(k) != after.get(k)  # git's own notes of a fetch aside
            and not k.startswith(".git/refs/remotes/") and "/logs/" not in k
            and not k.endswith(("FETCH_HEAD", "ORIG_HEAD"))} == set()
    whole = cli_json("verify", cwd=repo)[1]
    assert [(f["commit"], f["kind"]) for f in whole["findings"]] == [(bad, "illegal")]  # type: ignore[index]
    assert cli_json("stage", "r1", "1", "in_progress", cwd=repo)[0] == 0
    committed = run(state, "git", "commit", "-q", "--allow-empty", "-m", "a note of mine")
    assert committed.returncode == 0, committed.stdout + committed.stderr
    pushed = run(state, "git", "push", "origin", B)  # statedir's pre-push hook: what the push sends, verified
    assert pushed.returncode == 0 and "verified 1 commit(s): clean" in pushed.stdout + pushed.stderr, pushed
    assert cli_json("sync", cwd=repo)[0] == 1  # the pulled commit stays unverified until reviewed
    # reviewed here and accepted on this clone: now sync pushes, through statedir's hook alone
    assert cli("verify", "--acknowledge", bad, "--reason", "reviewed", cwd=repo).returncode == 0
    code, synced = cli_json("sync", cwd=repo)
    assert code == 0 and synced["pushed"], synced  # type: ignore[index]
    assert git(remote, "rev-parse", B) == git(repo, "rev-parse", B)
    assert run(repo, "git", "commit", "-q", "--allow-empty", "-m", "my own work").returncode == 0
    assert not marker.exists(), "a hook the remote planted ran"
    assert git(state, "config", "--get", "core.hooksPath") == str(repo / ".git" / "statedir" / "hooks")
    assert run(repo, "git", "config", "--get", "core.hooksPath").stdout == ""  # the user's: their own hooks


@pytest.mark.slow  # a remote, three clones, each step through the CLI
def test_a_teammates_init_branch_verifies_what_it_checks_out(tmp_path: Path) -> None:
    remote, repo = victim(tmp_path)
    run_file = "runs/r1/state.yaml"
    text = (repo / "state" / run_file).read_text()
    bad = collaborator(tmp_path, remote, {run_file: text.replace("topic: x", "topic: mine")}, "a quiet edit")
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(remote), str(teammate))
    before = snapshot(teammate)
    config = git(teammate, "config", "--list", "--local")
    code, refused = cli_json("init", "--branch", B, cwd=teammate)
    assert code == 1 and refused["error"]["code"] == "MERGE_REFUSED", refused  # type: ignore[index]
    assert f"{bad[:10]} hand_edit {run_file}" in refused["error"]["message"], refused  # type: ignore[index]
    assert [f["commit"] for f in refused["error"]["details"]["findings"]] == [bad]  # type: ignore[index]
    assert snapshot(teammate) == before and git(teammate, "config", "--list", "--local") == config
    assert not (teammate / "state").exists() and git(teammate, "branch", "--list", B) == ""
    # the remote put right (its branch back at the last clean commit): the attach verifies and records
    git(tmp_path / "mallory", "push", "-q", "--force", "origin", f"{bad}~1:refs/heads/{B}")
    git(teammate, "fetch", "-q", "origin")
    code, attached = cli_json("init", "--branch", B, cwd=teammate)
    assert code == 0 and attached["attached"], attached  # type: ignore[index]
    tip = git(teammate, "rev-parse", B)
    assert git(teammate, "config", f"branch.{B}.statedirVerified") == tip
    # later, incrementally: a plain pull of a hand edit is caught by the next sync, from the record on
    git(tmp_path / "mallory", "reset", "-q", "--hard", f"origin/{B}")
    later = collaborator(tmp_path, remote, {run_file: (teammate / "state" / run_file).read_text() + "# by hand\n"},
                         "another quiet edit")
    git(teammate / "state", "pull", "-q", "--no-rebase", "origin", B)
    code, refused = cli_json("sync", cwd=teammate)
    assert code == 1, refused
    assert [f["commit"] for f in refused["error"]["details"]["findings"]] == [later], refused  # type: ignore[index]
    assert git(teammate, "config", f"branch.{B}.statedirVerified") == tip


@pytest.mark.slow  # a forged store from its root, checked out by a teammate
def test_an_attach_refuses_a_root_commit_that_plants_hooks(tmp_path: Path) -> None:
    """A remote's whole history forged from the root: its init commit carries a hook config no
    statedir init writes."""
    remote, repo = victim(tmp_path)
    forged = tmp_path / "forged"
    git(tmp_path, "clone", "-q", "--branch", B, str(remote), str(forged))
    marker = tmp_path / "PWNED"
    root = git(forged, "rev-list", "--max-parents=0", "HEAD")
    git(forged, "checkout", "-q", root)
    (forged / ".pre-commit-config.yaml").write_text(planted(marker))
    git(forged, "add", ".pre-commit-config.yaml")
    git(forged, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--amend", "--no-edit")
    git(forged, "push", "-q", "--force", "origin", f"HEAD:refs/heads/{B}")
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(remote), str(teammate))
    for hook_type in HOOK_TYPES:
        run(teammate, "pre-commit", "install", "--hook-type", hook_type)
    code, refused = cli_json("init", "--branch", B, cwd=teammate)
    assert code == 1, refused
    finding = refused["error"]["details"]["findings"][0]  # type: ignore[index]
    assert finding["kind"] == "illegal" and finding["file"] == ".pre-commit-config.yaml", finding
    assert not (teammate / "state").exists() and not marker.exists()


def hooks_block() -> str:
    text = (ROOT / "docs" / "branch.md").read_text()
    return re.findall(r"```sh\n(.*?)```", text.split("\n## Hooks\n", 1)[1].split("\n## ", 1)[0], re.S)[0]


@pytest.mark.slow  # the docs' commands, then real commits and pushes in both work trees
def test_the_docs_hook_set_up_leaves_the_users_branch_working(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "feature-x")  # no .pre-commit-config.yaml of its own
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "-m", "code")
    git(repo, "remote", "add", "origin", str(remote))
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", hooks_block()], cwd=repo, capture_output=True,
                          text=True, env=env(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (repo / "code.py").write_text("x = 2\n")
    mine = run(repo, "git", "commit", "-qam", "more code")
    assert mine.returncode == 0, mine.stdout + mine.stderr
    pushed = run(repo, "git", "push", "-q", "origin", "feature-x")
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert git(remote, "rev-parse", "feature-x") == git(repo, "rev-parse", "feature-x")
    # the store's own hooks, in ./state alone: a broken hand edit refused on commit, a hand edit on push
    state = repo / "state"
    assert cli_json("new", "r1", "--topic", "x", cwd=repo)[0] == 0
    run_file = state / "runs" / "r1" / "state.yaml"
    good = run_file.read_text()
    run_file.write_text(good.replace("topic: x", "topic: [not, a, string]"))
    refused = run(state, "git", "commit", "-qam", "a broken hand edit")
    assert refused.returncode != 0 and "runs/r1/state.yaml" in refused.stdout + refused.stderr, refused
    run_file.write_text(good.replace("topic: x", "topic: by hand"))
    assert run(state, "git", "commit", "-qam", "a valid hand edit").returncode == 0
    refused = run(state, "git", "push", "-q", "origin", B)
    assert refused.returncode != 0 and "hand_edit" in refused.stdout + refused.stderr, refused
    assert git(remote, "branch", "--list", B) == ""


def test_a_store_work_tree_without_statedirs_hooks_is_found_and_fixed_by_doctor(repo: Path) -> None:
    """An attachment made before statedir installed the store's hooks (or with them undone)."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    assert cli("init", "--branch", B, cwd=repo).returncode == 0
    git(repo / "state", "config", "--worktree", "--unset", "core.hooksPath")
    code, doctor = cli_json("doctor", cwd=repo)
    assert code == 1 and [f["kind"] for f in doctor["findings"]] == ["store_hooks"], doctor  # type: ignore[index]
    assert cli("doctor", "--fix", cwd=repo).returncode == 0
    assert git(repo / "state", "config", "--get", "core.hooksPath") == str(repo / ".git" / "statedir" / "hooks")
    assert cli_json("doctor", cwd=repo)[0] == 0
    assert git(repo, "config", "--get", "core.hooksPath", check=False) == ""  # the user's work tree: untouched

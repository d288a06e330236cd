"""Where a commit enters history, the signing policy in force there holds it (statedir.history.entry):
a branch cut before signers.yaml existed, or before a key was removed, cannot carry unsigned or
revoked-key commits of a bound actor into signed history, through the driver's merge (`statedir
sync`), a plain `git merge`, or a merge the collaborator made itself that the victim's sync
fast-forwards onto. The collaborator's clone is driven with plain git and its own statedir; the
victim's through the CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.signing import NEEDS_SSH_KEYGEN, keygen
from tests.support.sync import git, network
from tests.support.util import cli, cli_json

pytestmark = NEEDS_SSH_KEYGEN

ORCH = "pipeline_orchestrator"


@pytest.fixture
def keys(isolated: Path) -> dict[str, Path]:
    """Private keys: alice's is the orchestrator's; carol's was, until the victim removes it."""
    return keygen(isolated.parent / "keys", ("alice", "carol"))


def done(clone: Path, *args: str, key: Path | None = None) -> str:
    proc = cli(*args, cwd=clone, env={"STATEDIR_SIGNING_KEY": str(key) if key else ""})
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return git(clone, "rev-parse", "HEAD")


def before_signing(base: Path, keys: dict[str, Path]) -> tuple[dict[str, Path], str]:
    """The victim (b) turns signing on and retitles r2, signed; the collaborator (a), on a clone
    cut before, retitles r1 as the orchestrator, unsigned (no signers.yaml on its side), and pushes."""
    c = network(base, ("a", "b"), runs=("r1", "r2"))
    done(c["b"], "signers", "add", ORCH, f"{keys['alice']}.pub", "--actor", ORCH, key=keys["alice"])
    done(c["b"], "set", "r2", "topic", "the victim's", "--reason", "b", key=keys["alice"])
    unsigned = done(c["a"], "set", "r1", "topic", "the collaborator's", "--reason", "a")
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    return c, unsigned


def after_removal(base: Path, keys: dict[str, Path]) -> tuple[dict[str, Path], str]:
    """The orchestrator is bound to alice's and carol's keys on both clones; the victim removes
    carol's (signed by alice) and retitles r2; the collaborator, holding carol's key on a clone
    cut before the removal, retitles r1 signed by it, and pushes."""
    c = network(base, ("a", "b"), runs=("r1", "r2"))
    done(c["a"], "signers", "add", ORCH, f"{keys['alice']}.pub", "--actor", ORCH, key=keys["alice"])
    done(c["a"], "signers", "add", ORCH, f"{keys['carol']}.pub", "--actor", ORCH, key=keys["alice"])
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    git(c["b"], "pull", "-q", "--no-rebase", "origin", "main")
    done(c["b"], "signers", "remove", ORCH, f"{keys['carol']}.pub", "--actor", ORCH, key=keys["alice"])
    done(c["b"], "set", "r2", "topic", "the victim's", "--reason", "b", key=keys["alice"])
    revoked = done(c["a"], "set", "r1", "topic", "the collaborator's", "--reason", "a", key=keys["carol"])
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    return c, revoked


SCENARIOS = {"before signers.yaml existed": before_signing, "before a key was removed": after_removal}


def kept(clone: Path) -> tuple[str, str, str, dict[str, bytes]]:
    """What a refusal leaves alone: HEAD, the branch, the index's entries and the work tree."""
    files = {p.relative_to(clone).as_posix(): p.read_bytes() for p in sorted(clone.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(clone).parts}
    return (git(clone, "rev-parse", "HEAD"), git(clone, "symbolic-ref", "HEAD"), git(clone, "ls-files", "-s"), files)


def refused(clone: Path, sha: str) -> None:
    before = kept(clone)
    proc = cli("sync", "--json", cwd=clone)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED", error
    named = [f for f in error["details"]["findings"] if f["commit"] == sha]
    assert named and "where the commit entered history" in named[0]["message"], error
    assert kept(clone) == before


def found(clone: Path, sha: str) -> list[dict[str, object]]:
    code, out = cli_json("verify", cwd=clone)
    assert code == 1, out
    named = [f for f in out["findings"] if f["commit"] == sha]  # type: ignore[index]
    assert named and named[0]["kind"] == "signature", out
    return named


# Slow: two clones, signed commits (ssh-keygen), a sync each (~3 CPU-s per case)
@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_drivers_merge_holds_what_it_brings_in_to_the_first_parents_signers(
        tmp_path: Path, keys: dict[str, Path], scenario: str) -> None:
    c, sha = SCENARIOS[scenario](tmp_path / "net", keys)
    refused(c["b"], sha)


# Slow: two clones, signed commits, a plain git merge and verify (~3 CPU-s per case)
@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_plain_git_merge_of_it_is_a_finding(tmp_path: Path, keys: dict[str, Path], scenario: str) -> None:
    c, sha = SCENARIOS[scenario](tmp_path / "net", keys)
    git(c["b"], "fetch", "-q", "origin")
    git(c["b"], "merge", "-q", "--no-edit", "origin/main")
    [finding] = found(c["b"], sha)
    assert "first parent" in str(finding["message"])


# Slow: two clones, signed commits, the collaborator's own merge, a sync (~3 CPU-s per case)
@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_sync_that_fast_forwards_holds_what_it_takes_to_the_head_it_had(
        tmp_path: Path, keys: dict[str, Path], scenario: str) -> None:
    """The collaborator merges the victim's published branch into its own (its branch the first
    parent, where the old policy is in force) and pushes: the victim's sync is a fast-forward."""
    c, sha = SCENARIOS[scenario](tmp_path / "net", keys)
    b = c["b"]
    git(b, "push", "-q", "--force", "origin", "HEAD:main")  # the victim published first
    git(c["a"], "fetch", "-q", "origin")
    git(c["a"], "merge", "-q", "--no-edit", "origin/main")
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    git(b, "fetch", "-q", "origin")
    assert git(b, "merge-base", "--is-ancestor", "HEAD", "origin/main") == ""  # a fast-forward
    refused(b, sha)


# Slow: two clones, signed commits (~3 CPU-s)
@pytest.mark.slow
def test_a_fresh_clone_holds_a_branch_cut_before_signing_to_the_side_that_signs(tmp_path: Path,
                                                                               keys: dict[str, Path]) -> None:
    """The collaborator's merge puts its unsigned branch first: the policy in force is the signed side's."""
    c, sha = before_signing(tmp_path / "net", keys)
    git(c["b"], "push", "-q", "--force", "origin", "HEAD:main")
    git(c["a"], "fetch", "-q", "origin")
    git(c["a"], "merge", "-q", "--no-edit", "origin/main")
    [finding] = found(c["a"], sha)
    assert "signed parent" in str(finding["message"])


# Slow: two clones, signed commits, a sync (~3 CPU-s)
@pytest.mark.slow
def test_a_rotation_made_on_the_other_side_enters_clean(tmp_path: Path, keys: dict[str, Path]) -> None:
    """What the rule lets through: the other clone rotates the orchestrator's key in signed changes
    (carol's added by alice's, alice's removed by carol's) and signs with the new one."""
    c = network(tmp_path / "net", ("a", "b"), runs=("r1", "r2"))
    done(c["a"], "signers", "add", ORCH, f"{keys['alice']}.pub", "--actor", ORCH, key=keys["alice"])
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    git(c["b"], "pull", "-q", "--no-rebase", "origin", "main")
    done(c["b"], "set", "r2", "topic", "the victim's", "--reason", "b", key=keys["alice"])
    done(c["a"], "signers", "add", ORCH, f"{keys['carol']}.pub", "--actor", ORCH, key=keys["alice"])
    done(c["a"], "signers", "remove", ORCH, f"{keys['alice']}.pub", "--actor", ORCH, key=keys["carol"])
    done(c["a"], "set", "r1", "topic", "rotated", "--reason", "a", key=keys["carol"])
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "merged", proc.stdout + proc.stderr
    code, out = cli_json("verify", cwd=c["b"])
    assert code == 0, out

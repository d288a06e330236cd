"""Signed transitions with real SSH keys, the write side (statedir.store.commit_keys): bound actors'
commits are signed by git (a key's path, git's user.signingKey, a key literal through ssh-agent),
refused before anything is written when no key of theirs is at hand, and unbound actors pay nothing
for signing."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from statedir import api
from tests.support.history import git
from tests.support.signing import NEEDS_SSH_KEYGEN, ORCH, as_, signature
from tests.support.util import cli, cli_json, snapshot

pytestmark = NEEDS_SSH_KEYGEN


def git_verifies(repo: Path, rev: str = "HEAD") -> bool:
    """git's own check of the commit, against `signers list --allowed-signers` (git's format)."""
    allowed = repo.parent / "allowed_signers"
    listed = cli("signers", "list", "--allowed-signers", cwd=repo)
    assert listed.returncode == 0 and listed.stdout.count('namespaces="git" ssh-ed25519 ') >= 1, listed
    allowed.write_text(listed.stdout)
    proc = subprocess.run(["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", rev], cwd=repo,
                          capture_output=True, check=False)
    return proc.returncode == 0


@pytest.mark.slow  # signs commits with ssh-keygen and verifies every signature
def test_bound_actor_signed_verifies_clean(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    proc = cli("new", "p1", "--topic", "signed", cwd=repo, env=as_(keys["alice"]))
    assert proc.returncode == 0, proc.stderr
    assert signature(repo) is not None and git_verifies(repo)
    lone = repo.parent / "alone.pub"  # a public key with no private half beside it: git signs through ssh-agent
    shutil.copy(f"{keys['alice']}.pub", lone)
    before = snapshot(repo)
    proc = cli("stage", "p1", "1", "in_progress", cwd=repo, env={"STATEDIR_SIGNING_KEY": str(lone),
                                                                  "SSH_AUTH_SOCK": ""})
    assert proc.returncode == 3 and "SIGNING_KEY_MISSING" in proc.stderr and "ssh-agent" in proc.stderr
    assert snapshot(repo) == before  # refused before anything was written
    before = snapshot(repo, objects=False)
    proc = cli("stage", "p1", "1", "in_progress", cwd=repo, env={"STATEDIR_SIGNING_KEY": str(lone),
                                                                  "SSH_AUTH_SOCK": str(repo.parent / "no-agent")})
    # an agent that is not there: git's signing fails after the files were written, and they are put back
    assert proc.returncode == 3 and "GIT_ERROR" in proc.stderr, proc.stderr
    after = snapshot(repo, objects=False)
    assert after.pop(".git/COMMIT_EDITMSG") != before.pop(".git/COMMIT_EDITMSG")  # git's own note of its attempt
    assert after == before
    code, out = cli_json("verify", cwd=repo)
    assert code == 0 and out == {"clean": True, "checked": 4, "findings": []}  # init, 2 signers, new


def test_git_user_signingkey_is_used(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingKey", str(keys["alice"]))
    proc = cli("new", "p1", "--topic", "signed", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert git_verifies(repo)


def test_unbound_actor_is_not_signed(bound: api.StateDir, repo: Path, keys: dict[str, Path],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEDIR_SIGNING_KEY", str(keys["alice"]))
    bound.new("p1", topic="t")
    monkeypatch.delenv("STATEDIR_SIGNING_KEY")
    proc = cli("signers", "remove", ORCH, "--actor", ORCH, cwd=repo, env=as_(keys["alice"]))  # its own key
    assert proc.returncode == 0, proc.stderr
    bound.stage("p1", "1", "in_progress")  # the orchestrator is unbound now: no key needed
    assert signature(repo) is None
    assert bound.verify() == {"clean": True, "checked": 6, "findings": []}


def test_bound_actor_without_a_key_is_refused_and_nothing_changes(bound: api.StateDir, repo: Path,
                                                                  keys: dict[str, Path]) -> None:
    before = snapshot(repo)
    code, out = cli_json("new", "p1", "--topic", "t", cwd=repo, env=as_(None))
    assert code == 3 and out["error"]["code"] == "SIGNING_KEY_MISSING"
    assert "STATEDIR_SIGNING_KEY" in out["error"]["message"]
    code, out = cli_json("new", "p1", "--topic", "t", cwd=repo, env=as_(keys["bob"]))  # bob's key is not ORCH's
    assert code == 3 and out["error"]["code"] == "SIGNING_KEY_MISMATCH"
    code, out = cli_json("new", "p1", "--topic", "t", cwd=repo, env=as_(repo / "no-such-key"))
    assert code == 3 and out["error"]["code"] == "SIGNING_KEY_MISSING"
    assert snapshot(repo) == before


def _git_commands(trace: Path) -> list[list[str]]:
    """The argv of every git process a GIT_TRACE2_EVENT trace saw start."""
    events = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    return [e["argv"] for e in events if e.get("event") == "start"]


def test_unbound_actors_pay_nothing_for_signing(bound: api.StateDir, repo: Path) -> None:
    """No key, no ssh-keygen, and no extra git process but one `cat-file` after a commit not
    statedir's (to learn HEAD's signers.yaml; statedir's own commits keep it known)."""
    (repo / "notes.txt").write_text("a commit of the user's: statedir's record of HEAD is void\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")
    reads = []
    for n in range(3):
        trace = repo.parent / f"trace{n}"
        proc = cli("bus", "init", f"2026-11-30-s{n}", "--actor", "someone", cwd=repo,
                   env={**as_(None), "GIT_TRACE2_EVENT": str(trace)})
        assert proc.returncode == 0, proc.stderr
        seen = _git_commands(trace)
        assert seen and all("-S" not in argv for argv in seen) and signature(repo) is None
        reads.append(len([argv for argv in seen if any("signers.yaml" in a for a in argv)]))
    assert reads == [1, 0, 0]


@pytest.mark.skipif(shutil.which("ssh-agent") is None or shutil.which("ssh-add") is None, reason="no ssh-agent")
def test_a_key_literal_signs_through_ssh_agent(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    sock = repo.parent / "agent.sock"
    started = subprocess.run(["ssh-agent", "-s", "-a", str(sock)], capture_output=True, text=True, check=True)
    pid = int(started.stdout.split("SSH_AGENT_PID=")[1].split(";")[0])
    try:
        env = {"SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(keys["alice"])], env={**os.environ, **env}, check=True,
                       capture_output=True)
        literal = "key::" + " ".join(keys["alice"].with_suffix(".pub").read_text().split()[:2])
        proc = cli("new", "p1", "--topic", "through the agent", cwd=repo,
                   env={**env, "STATEDIR_SIGNING_KEY": literal})
        assert proc.returncode == 0, proc.stderr
        assert git_verifies(repo) and bound.verify()["clean"]
    finally:
        subprocess.run(["kill", str(pid)], check=False)

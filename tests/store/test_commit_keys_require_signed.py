"""Roles that must prove themselves (statedir.yaml `require_signed`): a transition by such a role is
refused at the moment it is attempted unless signed by a key signers.yaml binds to that role
(SIGNING_KEY_MISSING / SIGNING_KEY_MISMATCH, nothing changed), and verify reports one in history
that is not."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir import api
from tests.support.signing import NEEDS_SSH_KEYGEN, keygen
from tests.support.util import cli, cli_json, snapshot

pytestmark = NEEDS_SSH_KEYGEN

ORCH, INTEGRITY = "pipeline_orchestrator", "integrity_verification"
VERDICT = ["integrity", "p", "2.5", "PASS", "--refs-total", "1", "--refs-verified", "1", "--actor", INTEGRITY]


def as_(key: Path | None) -> dict[str, str]:
    return {"STATEDIR_SIGNING_KEY": str(key) if key else ""}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def requiring(repo: Path, roles: str) -> None:
    """statedir.yaml with `require_signed: [roles]`, committed as a person would."""
    config = repo / "state" / "statedir.yaml"
    config.write_text(config.read_text() + f"require_signed: [{roles}]\n")
    git(repo, "commit", "-q", "-am", "require signed integrity verdicts")


@pytest.fixture
def store(repo: Path) -> Path:
    """A store with run p at stage 2.5 in progress, the orchestrator's key (alice) and the integrity
    agent's (bob) in keys/ beside the repository, and statedir.yaml requiring integrity_verification
    to sign."""
    keygen(repo.parent / "keys", ("alice", "bob"))
    api.init(repo / "state")
    sd = api.StateDir(repo / "state")
    sd.new("p", topic="T", entry_point="2.5")
    sd.material("p", ["paper_draft"])
    sd.stage("p", "2.5", "in_progress")
    requiring(repo, INTEGRITY)
    return repo / "state"


def test_an_unsigned_verdict_is_refused_when_it_is_attempted(store: Path, repo: Path) -> None:
    before = snapshot(repo)
    proc = cli(*VERDICT, "--json", cwd=repo, env=as_(None))
    assert proc.returncode == 3 and '"SIGNING_KEY_MISSING"' in proc.stdout, proc.stdout
    assert "must be signed (require_signed" in proc.stdout
    assert snapshot(repo) == before
    # the orchestrator's own work goes on unsigned: only the roles named must sign
    assert cli_json("set", "p", "topic", "U", "--reason", "r", cwd=repo, env=as_(None))[0] == 0


def test_only_the_roles_own_key_signs_for_it(store: Path, repo: Path) -> None:
    keys = repo.parent / "keys"
    for actor, key in ((ORCH, "alice"), (INTEGRITY, "bob")):  # alice's key binds both, as the first binder
        proc = cli("signers", "add", actor, f"{keys / key}.pub", "--actor", ORCH, cwd=repo, env=as_(keys / "alice"))
        assert proc.returncode == 0, proc.stderr
    before = snapshot(repo)
    proc = cli(*VERDICT, "--json", cwd=repo, env=as_(keys / "alice"))  # the orchestrator's key cannot sign it
    assert proc.returncode == 3 and '"SIGNING_KEY_MISMATCH"' in proc.stdout, proc.stdout
    assert snapshot(repo) == before
    code, out = cli_json(*VERDICT, cwd=repo, env=as_(keys / "bob"))
    assert code == 0, out
    findings = cli_json("verify", cwd=repo)[1]["findings"]  # type: ignore[index]
    assert not [f for f in findings if f["kind"] == "signature"], findings


def test_verify_reports_a_required_roles_unsigned_transition(store: Path, repo: Path) -> None:
    """A writer that drops `require_signed` from the work tree's statedir.yaml gets its unsigned verdict
    written; verify, reading statedir.yaml as committed before it, reports it (and sync refuses it)."""
    config = repo / "state" / "statedir.yaml"
    held = config.read_text()
    config.write_text(held.replace(f"require_signed: [{INTEGRITY}]\n", ""))
    code, out = cli_json(*VERDICT, cwd=repo, env=as_(None))
    assert code == 0, out
    config.write_text(held)
    findings = cli_json("verify", cwd=repo)[1]["findings"]  # type: ignore[index]
    flagged = [f for f in findings if f["kind"] == "signature"]
    assert [f["commit"] for f in flagged] == [out["commit"]]  # type: ignore[index]
    assert "integrity_verification's transitions must be signed" in flagged[0]["message"]


def test_a_required_role_binding_its_own_first_key_is_no_finding(store: Path, repo: Path) -> None:
    """After `require_signed` names it, the role binds its first key itself (a commit signed by the key
    it adds, which the write accepted): verify took that commit for an unsigned one of the role's, a
    finding no later commit could clear (and sync would refuse the history)."""
    keys = repo.parent / "keys"
    proc = cli("signers", "add", INTEGRITY, f"{keys / 'bob'}.pub", "--actor", INTEGRITY, cwd=repo,
               env=as_(keys / "bob"))
    assert proc.returncode == 0, proc.stderr
    assert cli_json(*VERDICT, cwd=repo, env=as_(keys / "bob"))[0] == 0
    findings = cli_json("verify", cwd=repo)[1]["findings"]  # type: ignore[index]
    assert not [f for f in findings if f["kind"] == "signature"], findings

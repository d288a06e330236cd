"""verify's check of signatures (statedir.history.signatures) with real SSH keys: it reports a
bound actor's commit that is unsigned, signed by another key or altered, and a change to
signers.yaml not signed by a key trusted as of its parent; each commit is held to the signers of
its parent, across a merge too."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.history.signatures import split
from tests.support.history import git
from tests.support.signing import INTEGRITY, NEEDS_SSH_KEYGEN, ORCH, as_, key_fingerprint
from tests.support.util import cli, cli_json

pytestmark = NEEDS_SSH_KEYGEN


def strip_signature(repo: Path) -> str:
    """Remake HEAD as the same commit without its signature (what a commit made by hand with
    statedir's trailers, or a signature removed in transit, looks like)."""
    raw = subprocess.run(["git", "cat-file", "commit", "HEAD"], cwd=repo, capture_output=True, check=True).stdout
    sha = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repo, input=split(raw)[1],
                         capture_output=True, check=True).stdout.decode().strip()
    git(repo, "update-ref", "HEAD", sha)
    return sha


def resign(repo: Path, key: Path) -> str:
    """Sign HEAD again, same tree and message, with another key."""
    git(repo, "-c", "gpg.format=ssh", "-c", f"user.signingKey={key}", "commit", "-q", "--amend", "--no-edit",
        "-S", "--allow-empty")
    return git(repo, "rev-parse", "HEAD").strip()


def test_unsigned_commit_of_a_bound_actor_is_reported(bound: api.StateDir, repo: Path, keys: dict[str, Path],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEDIR_SIGNING_KEY", str(keys["alice"]))
    bound.new("p1", topic="t")
    sha = strip_signature(repo)
    code, out = cli_json("verify", cwd=repo)
    assert code == 1 and [(f["commit"], f["kind"]) for f in out["findings"]] == [(sha, "signature")]
    assert "'pipeline_orchestrator' is bound" in out["findings"][0]["message"]
    assert "not signed" in out["findings"][0]["message"]


def test_commit_signed_by_another_actors_key_is_reported(bound: api.StateDir, repo: Path, keys: dict[str, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEDIR_SIGNING_KEY", str(keys["alice"]))
    bound.new("p1", topic="t")
    sha = resign(repo, keys["bob"])
    findings = bound.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "signature", None)]
    assert f"binds to {INTEGRITY}" in findings[0]["message"]
    sha = resign(repo, keys["carol"])  # a key nobody is bound to
    findings = bound.verify()["findings"]
    assert [f["commit"] for f in findings] == [sha] and "does not list" in findings[0]["message"]


def test_commit_changed_after_signing_is_reported(bound: api.StateDir, repo: Path, keys: dict[str, Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEDIR_SIGNING_KEY", str(keys["alice"]))
    bound.new("p1", topic="t")
    raw = subprocess.run(["git", "cat-file", "commit", "HEAD"], cwd=repo, capture_output=True, check=True).stdout
    doctored = raw.replace(b"new run p1", b"new run P1", 1)
    assert doctored != raw and split(doctored)[0] == split(raw)[0]  # the signature kept, the message edited
    sha = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repo, input=doctored,
                         capture_output=True, check=True).stdout.decode().strip()
    git(repo, "update-ref", "HEAD", sha)
    findings = bound.verify()["findings"]
    assert [(f["commit"], f["kind"]) for f in findings] == [(sha, "signature")]
    assert "does not verify" in findings[0]["message"]


def test_signers_change_by_an_untrusted_key_is_reported(bound: api.StateDir, repo: Path,
                                                        keys: dict[str, Path]) -> None:
    proc = cli("signers", "add", "carol", f"{keys['carol']}.pub", "--actor", INTEGRITY, cwd=repo,
               env=as_(keys["bob"]))
    assert proc.returncode == 0, proc.stderr
    assert bound.verify()["clean"]
    sha = resign(repo, keys["carol"])  # carol's key binds carol only from this commit on: not trusted for it
    findings = bound.verify()["findings"]
    assert {(f["commit"], f["kind"], f["file"]) for f in findings} == {(sha, "signature", "signers.yaml"),
                                                                       (sha, "signature", None)}
    assert any("must be signed by a key it already trusts" in f["message"] for f in findings)


def test_hand_edit_of_signers_is_reported(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    path = repo / "state/signers.yaml"
    carol = (Path(f"{keys['carol']}.pub").read_text().split()[:2])
    path.write_text(path.read_text() + f"  - actor: carol\n    key: {' '.join(carol)}\n")
    git(repo, "commit", "-q", "-a", "-m", "trust me")
    sha = git(repo, "rev-parse", "HEAD").strip()
    findings = bound.verify()["findings"]
    assert {(f["commit"], f["kind"], f["file"]) for f in findings} == {(sha, "hand_edit", "signers.yaml"),
                                                                       (sha, "signature", "signers.yaml")}


def test_first_signers_version_must_be_signed_by_a_key_it_lists(sd: api.StateDir, repo: Path,
                                                                keys: dict[str, Path]) -> None:
    proc = cli("signers", "add", ORCH, f"{keys['alice']}.pub", cwd=repo, env=as_(keys["alice"]))
    assert proc.returncode == 0, proc.stderr
    assert sd.verify()["clean"]
    sha = resign(repo, keys["bob"])
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [(sha, "signature", "signers.yaml")]
    assert "the first signers.yaml must be signed by a key it lists" in findings[0]["message"]


def test_binding_is_read_as_of_each_parent(bound: api.StateDir, repo: Path, keys: dict[str, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit is held to the signers of its parent: signing with a key bound only by a later
    commit does not count, and a binding removed later still applied before."""
    monkeypatch.setenv("STATEDIR_SIGNING_KEY", str(keys["alice"]))
    bound.new("p1", topic="t")
    bound.add_signer(ORCH, f"{keys['carol']}.pub", actor=ORCH)  # rotation: carol's key added, alice's kept
    monkeypatch.setenv("STATEDIR_SIGNING_KEY", str(keys["carol"]))
    bound.stage("p1", "1", "in_progress")
    bound.remove_signer(ORCH, f"{keys['alice']}.pub", actor=ORCH)
    assert [e["fingerprint"] for e in bound.signers() if e["actor"] == ORCH] == [key_fingerprint(keys["carol"])]
    assert bound.verify()["clean"]
    git(repo, "reset", "-q", "--hard", "HEAD~3")  # back to the `new`
    sha = resign(repo, keys["carol"])  # signed again, by a key bound only by the next commit
    findings = bound.verify()["findings"]
    assert [(f["commit"], f["kind"]) for f in findings] == [(sha, "signature")]


@pytest.mark.slow  # signs commits with ssh-keygen and verifies every signature
def test_a_merge_of_signed_branches_verifies_clean(bound: api.StateDir, repo: Path, keys: dict[str, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEDIR_SIGNING_KEY", str(keys["alice"]))
    git(repo, "switch", "-q", "-c", "side")
    bound.new("p2", topic="on a branch")
    bound.add_signer("carol", f"{keys['carol']}.pub", actor=ORCH)
    git(repo, "switch", "-q", "main")
    bound.new("p3", topic="on main")
    git(repo, "merge", "-q", "--no-edit", "side")
    proc = cli("new", "p4", "--topic", "after the merge", "--actor", ORCH, cwd=repo, env=as_(keys["alice"]))
    assert proc.returncode == 0, proc.stderr
    # init, 2 signers, p2, carol, p3, the merge, p4
    assert bound.verify() == {"clean": True, "checked": 8, "findings": []}
    assert [r["actor"] for r in bound.signers()] == [ORCH, INTEGRITY, "carol"]  # the side's change came in
    sha = strip_signature(repo)  # the commit after the merge is still held to the signers of its parent
    assert [(f["commit"], f["kind"]) for f in bound.verify()["findings"]] == [(sha, "signature")]

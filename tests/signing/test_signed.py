"""Signed transitions with real SSH keys: bound actors' commits are signed by git, refused
before anything is written when no key of theirs is at hand, and verify reports a bound
actor's commit that is unsigned, signed by another key or altered, and a change to
signers.yaml not signed by a key trusted as of its parent."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.history.signatures import split
from tests.support.history import git
from tests.support.isolation import isolated_at
from tests.support.signing import NEEDS_SSH_KEYGEN, keygen
from tests.support.util import call, cli, cli_json, snapshot

pytestmark = NEEDS_SSH_KEYGEN

ORCH, INTEGRITY = "pipeline_orchestrator", "integrity_verification"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once for this module: the keys of alice, bob and carol in keys/, and in work/ a
    repository whose store binds the orchestrator to alice's key and the integrity agent to bob's
    (through the CLI, as a user binds them)."""
    root = tmp_path_factory.mktemp("signed")
    repo = root / "work"
    with isolated_at(root):
        keygen(root / "keys", ("alice", "bob", "carol"))
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        api.init(repo / "state")
        proc = cli("signers", "add", ORCH, f"{root / 'keys' / 'alice'}.pub", "--actor", ORCH, cwd=repo,
                   env=as_(root / "keys" / "alice"))
        assert proc.returncode == 0, proc.stderr
        proc = cli("signers", "add", INTEGRITY, f"{root / 'keys' / 'bob'}.pub", "--actor", ORCH, cwd=repo,
                   env=as_(root / "keys" / "alice"))
        assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture
def keys(tmp_path: Path, made: Path) -> dict[str, Path]:
    """Private key paths (the .pub beside each) of alice, bob and carol: the test's own copies."""
    shutil.copytree(made / "keys", tmp_path / "keys")
    return {name: tmp_path / "keys" / name for name in ("alice", "bob", "carol")}


def as_(key: Path | None) -> dict[str, str]:
    return {"STATEDIR_SIGNING_KEY": str(key) if key else ""}


@pytest.fixture
def bound(repo: Path, keys: dict[str, Path], made: Path) -> api.StateDir:
    """A store where the orchestrator is bound to alice's key and the integrity agent to bob's:
    the module's bound store copied into the test's repository."""
    shutil.copytree(made / "work", repo, symlinks=True, dirs_exist_ok=True)
    return api.StateDir(repo / "state")


def signature(repo: Path, rev: str = "HEAD") -> bytes | None:
    raw = subprocess.run(["git", "cat-file", "commit", rev], cwd=repo, capture_output=True, check=True).stdout
    return split(raw)[0]


def git_verifies(repo: Path, rev: str = "HEAD") -> bool:
    """git's own check of the commit, against `signers list --allowed-signers` (git's format)."""
    allowed = repo.parent / "allowed_signers"
    listed = cli("signers", "list", "--allowed-signers", cwd=repo)
    assert listed.returncode == 0 and listed.stdout.count('namespaces="git" ssh-ed25519 ') >= 1, listed
    allowed.write_text(listed.stdout)
    proc = subprocess.run(["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", rev], cwd=repo,
                          capture_output=True, check=False)
    return proc.returncode == 0


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


def test_signers_change_refused_without_a_trusted_key(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    before = snapshot(repo)
    code, out = cli_json("signers", "add", "carol", f"{keys['carol']}.pub", "--actor", "carol", cwd=repo,
                         env=as_(keys["carol"]))
    assert code == 1 and out["error"]["code"] == "PERMISSION_DENIED"
    code, out = cli_json("signers", "add", "carol", f"{keys['carol']}.pub", cwd=repo, env=as_(None))
    assert code == 3 and out["error"]["code"] == "SIGNING_KEY_MISSING"
    assert snapshot(repo) == before


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
    assert [e["fingerprint"] for e in bound.signers() if e["actor"] == ORCH] == [_fingerprint(keys["carol"])]
    assert bound.verify()["clean"]
    git(repo, "reset", "-q", "--hard", "HEAD~3")  # back to the `new`
    sha = resign(repo, keys["carol"])  # signed again, by a key bound only by the next commit
    findings = bound.verify()["findings"]
    assert [(f["commit"], f["kind"]) for f in findings] == [(sha, "signature")]


def _fingerprint(key: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-l", "-f", f"{key}.pub"], capture_output=True, text=True, check=True)
    return out.stdout.split()[1]


def test_large_repository_commits_are_signed_too(repo: Path, keys: dict[str, Path]) -> None:
    """The plumbing path (commit-tree and a compare-and-swap update-ref) signs as `git commit` does."""
    from statedir.gitops import git as git_mod
    from statedir.gitops import store_commit

    (repo / "a.txt").write_text("one\n")
    store_commit.commit(repo, ["a.txt"], "first\n", author="x")
    (repo / "a.txt").write_text("two\n")
    sha = store_commit.commit(repo, ["a.txt"], "second\n", author="x", plumbing_above=0, signing_key=str(keys["alice"]))
    assert git_mod.head(repo) == sha and signature(repo) is not None
    allowed = repo.parent / "allowed"
    allowed.write_text(f"x {keys['alice'].with_suffix('.pub').read_text()}")
    proc = subprocess.run(["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", sha], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert git(repo, "status", "--porcelain") == ""


def test_bad_keys_are_refused_and_change_nothing(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    before = snapshot(repo)
    env = as_(keys["alice"])
    for bad in (str(keys["alice"]), "ssh-ed25519 not-base64!", "ssh-ed25519", str(repo / "missing.pub"),
                Path(f"{keys['alice']}.pub").read_text()):  # a private key, damaged, cut, missing, already bound
        code, out = cli_json("signers", "add", "someone", bad, "--actor", ORCH, cwd=repo, env=env)
        assert code == 2 and out["error"]["code"] == "INVALID_VALUE", (bad, out)
    code, out = cli_json("signers", "add", "no spaces please", f"{keys['carol']}.pub", "--actor", ORCH, cwd=repo,
                         env=env)
    assert code == 2, out
    code, out = cli_json("signers", "remove", "nobody", "--actor", ORCH, cwd=repo, env=env)
    assert code == 2, out
    assert snapshot(repo) == before


def test_validate_covers_signers(bound: api.StateDir, repo: Path) -> None:
    assert cli("validate", cwd=repo).returncode == 0
    path = repo / "state/signers.yaml"
    path.write_text(path.read_text().replace("ssh-ed25519 ", "ssh-ed25519x ", 1))
    proc = cli("validate", "--json", cwd=repo)
    assert proc.returncode != 0 and "signers.yaml" in proc.stdout


def test_list_through_the_cli(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    code, rows = cli_json("signers", "list", cwd=repo)
    assert code == 0 and [(r["actor"], r["fingerprint"], r["comment"]) for r in rows] == [
        (ORCH, _fingerprint(keys["alice"]), "alice@lab"), (INTEGRITY, _fingerprint(keys["bob"]), "bob@lab")]
    assert "alice@lab" in cli("signers", "list", cwd=repo).stdout


def test_every_signers_command_has_help_and_is_documented() -> None:
    from tests.support.docs_text import page

    readme = page("signing")
    for command in ("add", "remove", "list"):
        code, out, _ = call(["signers", command, "--help"])  # in this process: three CLI starts spared
        assert code == 0 and "Usage:" in out, command
        assert f"statedir signers {command}" in readme, command


def test_after_the_last_key_is_removed_signing_starts_over(bound: api.StateDir, repo: Path, keys: dict[str, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """With nobody left bound, the next change is a first version again: signed by the key it adds."""
    for actor, key in ((INTEGRITY, keys["bob"]), (ORCH, keys["alice"])):  # each binding by its own key
        with monkeypatch.context() as signing:
            signing.setenv("STATEDIR_SIGNING_KEY", str(key))
            bound.remove_signer(actor, actor=actor)  # through the API: what is tested is what comes after
    assert bound.signers() == []
    bound.new("p1", topic="nobody is bound")
    assert signature(repo) is None
    code, out = cli_json("signers", "add", "carol", f"{keys['carol']}.pub", "--actor", "carol", cwd=repo,
                         env=as_(keys["alice"]))  # alice's key was removed: it is not the one added
    assert code == 1 and out["error"]["code"] == "PERMISSION_DENIED"
    proc = cli("signers", "add", "carol", f"{keys['carol']}.pub", "--actor", "carol", cwd=repo, env=as_(keys["carol"]))
    assert proc.returncode == 0, proc.stderr
    assert bound.verify() == {"clean": True, "checked": 7, "findings": []}


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

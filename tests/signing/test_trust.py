"""A binding in signers.yaml changes only with a key of the actor it binds, replayed from the
root of trust: with real SSH keys, a reviewer whose key is trusted cannot bind its own key to
the orchestrator, unbind the orchestrator's, or undo the orchestrator's key rotation, neither
through statedir (refused) nor by commits made by hand (verify reports them, and holds every
later commit to the signers as they were before them; sync refuses them)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statedir import api
from statedir.files.signers_file import Signers, fingerprint, parse, public_key
from statedir.store import commit_keys as signing_keys
from tests.support.history import forge, git
from tests.support.signing import NEEDS_SSH_KEYGEN, keygen
from tests.support.sync import network
from tests.support.util import cli, cli_json

pytestmark = NEEDS_SSH_KEYGEN

ORCH, REVIEWER = "pipeline_orchestrator", "reviewer"


@pytest.fixture
def keys(isolated: Path) -> dict[str, Path]:
    """Private keys: alice's and carol's are the orchestrator's, bob's and mallory's the reviewer's."""
    return keygen(isolated.parent / "keys", ("alice", "bob", "carol", "mallory"))


def pub(key: Path) -> str:
    return public_key(key.with_suffix(".pub").read_text())[0]


def signers(repo: Path, op: str, actor: str, key: Path, *, by: str, signer: Path) -> None:
    proc = cli("signers", op, actor, f"{key}.pub", "--actor", by, cwd=repo, env={"STATEDIR_SIGNING_KEY": str(signer)})
    assert proc.returncode == 0, proc.stderr


def bind(repo: Path, keys: dict[str, Path]) -> None:
    """The orchestrator turns signing on with alice's key and binds the reviewer to bob's."""
    signers(repo, "add", ORCH, keys["alice"], by=ORCH, signer=keys["alice"])
    signers(repo, "add", REVIEWER, keys["bob"], by=ORCH, signer=keys["alice"])


def rebind(repo: Path, keys: dict[str, Path]) -> list[str]:
    """What the issue saw: the reviewer's key binds mallory's key (the reviewer's) to the
    orchestrator and unbinds alice's, by hand with statedir's trailers; then signs as the orchestrator."""
    before = parse((repo / "state" / "signers.yaml").read_bytes())
    taken = Signers([*before.entries, {"actor": ORCH, "key": pub(keys["mallory"])}])
    add = {"op": "add", "actor": ORCH, "key": pub(keys["mallory"])}
    shas = [forge(repo, {"signers.yaml": signing_keys.dump(taken)}, action="signers", actor=REVIEWER,
                  request={"args": add}, sign=keys["bob"])]
    kept = Signers([e for e in taken.entries if e["key"] != pub(keys["alice"])])
    remove = {"op": "remove", "actor": ORCH, "key": pub(keys["alice"])}
    shas.append(forge(repo, {"signers.yaml": signing_keys.dump(kept)}, action="signers", actor=REVIEWER,
                      request={"args": remove}, sign=keys["bob"]))
    proc = cli("new", "r2", "--topic", "as the orchestrator", cwd=repo,
               env={"STATEDIR_SIGNING_KEY": str(keys["mallory"])})
    assert proc.returncode == 0, proc.stderr  # statedir reads the file as HEAD has it: mallory signs for ORCH
    shas.append(git(repo, "rev-parse", "HEAD").strip())
    return shas


@pytest.mark.slow  # signs commits with ssh-keygen and verifies every signature
def test_statedir_refuses_a_rebind_by_another_actors_key(sd: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    bind(repo, keys)
    for op, key in (("add", keys["mallory"]), ("remove", keys["alice"])):
        code, out = cli_json("signers", op, ORCH, f"{key}.pub", "--actor", REVIEWER, cwd=repo,
                             env={"STATEDIR_SIGNING_KEY": str(keys["bob"])})
        assert code == 1 and out["error"]["code"] == "PERMISSION_DENIED", out  # type: ignore[index]
        assert f"the binding of {ORCH} changes only with one of {ORCH}'s own keys" in out["error"]["message"]  # type: ignore[index]
    signers(repo, "add", "integrity", keys["carol"], by=REVIEWER, signer=keys["bob"])  # a new actor: any trusted key
    assert sd.verify()["clean"]


@pytest.mark.slow  # signs commits with ssh-keygen and verifies every signature
def test_verify_reports_a_rebind_and_what_was_signed_under_it(sd: api.StateDir, repo: Path,
                                                              keys: dict[str, Path]) -> None:
    bind(repo, keys)
    added, removed, signed = rebind(repo, keys)
    findings = sd.verify()["findings"]
    assert [(f["commit"], f["kind"], f["file"]) for f in findings] == [
        (added, "signature", "signers.yaml"), (removed, "signature", "signers.yaml"), (signed, "signature", None)]
    bob = fingerprint(pub(keys["bob"]))
    for finding in findings[:2]:
        assert f"the binding of {ORCH} changes only with one of {ORCH}'s own keys" in finding["message"]
        assert f"signed by {bob}, a key signers.yaml binds to {REVIEWER}" in finding["message"]
    assert f"signed by {fingerprint(pub(keys['mallory']))}, a key signers.yaml does not list" in findings[2]["message"]


@pytest.mark.slow  # signed commits across a key rotation
def test_a_rotation_cannot_be_undone_by_another_key(sd: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    """The orchestrator moves from alice's key to carol's; the reviewer puts the file back as it
    was (the same bytes as a version trusted before), and alice's old key signs for the orchestrator."""
    bind(repo, keys)
    old = (repo / "state" / "signers.yaml").read_bytes()
    signers(repo, "add", ORCH, keys["carol"], by=ORCH, signer=keys["alice"])
    signers(repo, "remove", ORCH, keys["alice"], by=ORCH, signer=keys["carol"])
    assert sd.verify()["clean"]
    back = forge(repo, {"signers.yaml": old}, action="signers", actor=REVIEWER, sign=keys["bob"],
                 request={"args": {"op": "add", "actor": ORCH, "key": pub(keys["alice"])}})
    proc = cli("new", "r2", "--topic", "t", cwd=repo, env={"STATEDIR_SIGNING_KEY": str(keys["alice"])})
    assert proc.returncode == 0, proc.stderr
    signed = git(repo, "rev-parse", "HEAD").strip()
    found = [(f["commit"], f["kind"]) for f in sd.verify()["findings"]]
    assert (back, "signature") in found and (signed, "signature") in found, found


# Slow: clones of one remote, a sync and a verify after a pull (~2 CPU-s)
@pytest.mark.slow
def test_sync_refuses_a_rebind_and_verify_reports_it_after_a_pull(tmp_path: Path, keys: dict[str, Path]) -> None:
    c = network(tmp_path / "net", ("a", "b", "c"))
    bind(c["a"], keys)
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    for name in ("b", "c"):
        git(c[name], "pull", "-q", "--no-rebase", "origin", "main")
    head = git(c["b"], "rev-parse", "HEAD").strip()
    shas = rebind(c["a"], keys)
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    proc = cli("sync", "--json", cwd=c["b"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED" and [f["commit"] for f in error["details"]["findings"]] == shas
    assert git(c["b"], "rev-parse", "HEAD").strip() == head and git(c["b"], "status", "--porcelain") == ""
    git(c["c"], "pull", "-q", "--no-rebase", "origin", "main")
    code, out = cli_json("verify", cwd=c["c"])
    assert code == 1 and [f["commit"] for f in out["findings"]] == shas  # type: ignore[index]

"""The signers commands (statedir.signing.manage) with real SSH keys: a change to signers.yaml
needs a key trusted as of its parent, bad keys and names are refused with nothing changed, the
bindings are listed, and after the last key is removed signing starts over; each command has help
and is documented."""
from __future__ import annotations

from pathlib import Path

import pytest

from statedir import api
from tests.support.signing import INTEGRITY, NEEDS_SSH_KEYGEN, ORCH, as_, key_fingerprint, signature
from tests.support.util import call, cli, cli_json, snapshot

pytestmark = NEEDS_SSH_KEYGEN


def test_signers_change_refused_without_a_trusted_key(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    before = snapshot(repo)
    code, out = cli_json("signers", "add", "carol", f"{keys['carol']}.pub", "--actor", "carol", cwd=repo,
                         env=as_(keys["carol"]))
    assert code == 1 and out["error"]["code"] == "PERMISSION_DENIED"
    code, out = cli_json("signers", "add", "carol", f"{keys['carol']}.pub", cwd=repo, env=as_(None))
    assert code == 3 and out["error"]["code"] == "SIGNING_KEY_MISSING"
    assert snapshot(repo) == before


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


def test_list_through_the_cli(bound: api.StateDir, repo: Path, keys: dict[str, Path]) -> None:
    code, rows = cli_json("signers", "list", cwd=repo)
    assert code == 0 and [(r["actor"], r["fingerprint"], r["comment"]) for r in rows] == [
        (ORCH, key_fingerprint(keys["alice"]), "alice@lab"), (INTEGRITY, key_fingerprint(keys["bob"]), "bob@lab")]
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

"""No error repeats a file from outside the store that a command could not read as what it
wanted (a public key, a signing key, YAML, a template, a passport, a report, ARS rows, a file
`validate --schema` checks): the path may name any file the process can read (`/etc/shadow`
under root), and the caller may be an agent that should not see it. Through the CLI (in this
process: 84 commands), text and --json."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.isolation import isolated_at
from tests.support.util import call, cli

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git and the CLI

SECRET = "S3CRET"
FILES = {
    "shadow": f"root:$6${SECRET}hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
    "duplicate keys": f"token: {SECRET}1\ntoken: {SECRET}2\n",
    "a tag": f"token: !{SECRET} x\n",
    "broken flow": f"token: [{SECRET}\n",
    "unknown keys": f"{SECRET}_key: 1\nadvisory_only: true\nname: x\nstages: {SECRET}_value\n",
    "one line": f"{SECRET} {SECRET}\n",
}
COMMANDS = {
    "signers add": ["signers", "add", "someone", "{file}"],
    "new --template": ["new", "r2", "--topic", "t", "--template", "{file}"],
    "new --passport": ["new", "r2", "--topic", "t", "--entry-point", "3", "--confirm-skip", "--passport", "{file}"],
    "observe --report": ["observe", "r1", "--stage", "1", "--checkpoint", "FULL", "--report", "{file}",
                         "--actor", "collaboration_depth_agent"],
    "seal --bindings": ["seal", "r1", "--artifact-root", ".", "--bindings", "{file}"],
    "validate --schema template": ["validate", "--schema", "template", "{file}"],
    "validate --schema state": ["validate", "--schema", "state", "{file}"],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("disclosure")
    repo = root / "work"
    with isolated_at(root):
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        for args in (["init"], ["new", "r1", "--topic", "t"]):
            proc = cli(*args, cwd=repo)
            assert proc.returncode == 0, proc.stderr
    return repo


def _quiet(code: int, out: str, err: str, what: str) -> None:
    assert code != 0, (what, out)
    assert SECRET not in out + err, (what, out + err)
    assert "Traceback" not in err, err


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("content", FILES)
def test_a_file_that_is_not_what_was_asked_for_is_never_quoted(store: Path, tmp_path: Path, command: str,
                                                              content: str) -> None:
    secret = tmp_path / "secret"
    secret.write_text(FILES[content])
    args = [a.format(file=secret) for a in COMMANDS[command]]
    for extra in ([], ["--json"]):
        _quiet(*call([*args, *extra, "--store", str(store / "state")]), f"{command} on {content} {extra}")


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed: no key to add")
@pytest.mark.parametrize("content", ["shadow", "one line"])
def test_a_signing_key_setting_naming_another_file_is_never_quoted(store: Path, tmp_path: Path,
                                                                   content: str) -> None:
    key = tmp_path / "alice"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    secret = tmp_path / "secret"
    secret.write_text(FILES[content])
    for extra in ([], ["--json"]):
        proc = cli("signers", "add", "alice", f"{key}.pub", *extra, cwd=store,
                   env={"STATEDIR_SIGNING_KEY": str(secret)})
        _quiet(proc.returncode, proc.stdout, proc.stderr, f"STATEDIR_SIGNING_KEY={content} {extra}")

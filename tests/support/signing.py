"""SSH keys for the signing tests: made with ssh-keygen, which a module skips without; the roles the
bound store binds (tests/conftest.py's `bound`), a commit's signature and a key's fingerprint."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

from statedir.history.signatures import split

NEEDS_SSH_KEYGEN = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                      reason="ssh-keygen (OpenSSH client tools) is not installed: no keys to sign with")


def keygen(folder: Path, names: Iterable[str]) -> dict[str, Path]:
    """An ed25519 key without a passphrase for each of `names` (commented `name@lab`) in `folder`:
    each name's private key, its public key beside it (`.pub`)."""
    out = {}
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{name}@lab", "-f", str(folder / name)],
                       check=True)
        out[name] = folder / name
    return out


# The two roles the signing tests' bound store binds: the orchestrator to alice's key, the integrity
# agent to bob's (tests/conftest.py's `bound`).
ORCH, INTEGRITY = "pipeline_orchestrator", "integrity_verification"


def as_(key: Path | None) -> dict[str, str]:
    return {"STATEDIR_SIGNING_KEY": str(key) if key else ""}


def signature(repo: Path, rev: str = "HEAD") -> bytes | None:
    raw = subprocess.run(["git", "cat-file", "commit", rev], cwd=repo, capture_output=True, check=True).stdout
    return split(raw)[0]


def key_fingerprint(key: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-l", "-f", f"{key}.pub"], capture_output=True, text=True, check=True)
    return out.stdout.split()[1]

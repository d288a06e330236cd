"""SSH keys for the signing tests: made with ssh-keygen, which a module skips without."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

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

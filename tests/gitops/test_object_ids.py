"""statedir.gitops.object_ids: the ids git itself gives, whichever SHA-1 (CPython's own below
its size limit, OpenSSL's above it) or SHA-256 made them."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir.gitops import object_ids

pytestmark = pytest.mark.usefixtures("isolated")  # every test here runs git or the CLI


@pytest.mark.parametrize("size", [0, 1, 1000, (1 << 16) - 20, 1 << 16, 200_000])
@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_a_blob_id_is_the_one_git_gives(tmp_path: Path, size: int, object_format: str) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", f"--object-format={object_format}", str(repo)], check=True)
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    (repo / "f").write_bytes(data)
    expected = subprocess.run(["git", "hash-object", "f"], cwd=repo, capture_output=True, text=True,
                              check=True).stdout.strip()
    assert object_ids.blob_id(data, 40 if object_format == "sha1" else 64) == expected


def test_small_input_is_hashed_without_loading_openssl(tmp_path: Path) -> None:
    """The point of the module: a transition's hashing does not import hashlib (OpenSSL)."""
    import sys

    code = ("import sys\nfrom statedir.gitops import object_ids\nobject_ids.blob_id(b'x' * 1000, 40)\n"
            "print('hashlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"

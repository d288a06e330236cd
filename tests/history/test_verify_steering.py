"""verify and the store files that steer git or hooks (statedir.store.steering): any change to one is
`illegal`, by hand or under forged trailers, but the texts statedir's own init writes."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from statedir import api
from statedir.store import layout, steering
from tests.support.history import forge, git, hand_commit

HOOKS = b"repos:\n  - repo: local\n    hooks:\n      - id: x\n        name: x\n        entry: touch PWNED\n" \
        b"        language: system\n"


def found(sd: api.StateDir) -> list[tuple[str, str, str | None]]:
    return [(f["commit"], f["kind"], f["file"]) for f in sd.verify()["findings"]]


@pytest.mark.parametrize("rel, text", [(".pre-commit-config.yaml", HOOKS), (".gitattributes", b"* merge=union\n"),
                                       (".gitignore", b"runs/\n"), (".gitmodules", b"[submodule \"x\"]\n"),
                                       (".github/workflows/ci.yml", b"on: push\n"), ("lefthook.yml", b"pre-push: {}\n"),
                                       ("runs/p1/.pre-commit-config.yaml", HOOKS)])
def test_a_hand_commit_of_a_file_that_steers_git_or_hooks_is_illegal(sd: api.StateDir, repo: Path, rel: str,
                                                                    text: bytes) -> None:
    sd.new("p1", topic="t")
    path = repo / "state" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    git(repo, "add", "-f", str(path))
    sha = hand_commit(repo)
    assert found(sd) == [(sha, "illegal", rel)]


def test_forged_trailers_and_a_deletion_are_illegal_too(sd: api.StateDir, repo: Path) -> None:
    sd.new("p1", topic="t")
    forged = forge(repo, {".pre-commit-config.yaml": HOOKS}, action="doctor")
    deleted = forge(repo, {".gitattributes": None}, action="init")
    assert found(sd) == [(forged, "illegal", ".pre-commit-config.yaml"), (deleted, "illegal", ".gitattributes")]
    message = sd.verify()["findings"][0]["message"]
    assert "only statedir's own init writes" in message and "hook manager" in message, message


def test_doctor_may_write_the_attributes_statedir_writes_and_no_other(sd: api.StateDir, repo: Path) -> None:
    (repo / "state" / ".gitattributes").write_text("*.yaml text eol=lf\n")
    old = hand_commit(repo, "an old store's attributes")
    restored = forge(repo, {".gitattributes": layout.GITATTRIBUTES.encode()}, action="doctor")
    other = forge(repo, {".gitattributes": b"*.yaml merge=union\n"}, action="doctor")
    assert found(sd) == [(old, "illegal", ".gitattributes"), (other, "illegal", ".gitattributes")]
    assert restored not in {f[0] for f in found(sd)}


def _root_store(repo: Path, files: dict[str, bytes]) -> str:
    """A store whose first commit, with init's trailers, holds `files` beside a real init's."""
    from statedir.gitops import commit_message

    api.init(repo / "state")
    for rel, data in files.items():
        (repo / "state" / rel).write_bytes(data)
        git(repo, "add", "-f", str(repo / "state" / rel))
    message = commit_message.message("init statedir store", "-", "state_tracker", "init")
    subprocess.run(["git", "commit", "-q", "--amend", "-F", "-"], cwd=repo, input=message, text=True, check=True)
    return git(repo, "rev-parse", "HEAD").strip()


def test_an_init_commit_holds_only_the_texts_statedirs_init_writes(repo: Path) -> None:
    _root_store(repo, {layout.PRE_COMMIT_CONFIG: steering.LEGACY_PRE_COMMIT_CONFIG.encode()})
    sd = api.StateDir(repo / "state")
    assert sd.verify()["clean"], sd.verify()  # a store init --branch made before statedir installed hooks


def test_an_init_commit_with_a_planted_hook_config_is_illegal(repo: Path) -> None:
    sha = _root_store(repo, {layout.PRE_COMMIT_CONFIG: HOOKS})
    sd = api.StateDir(repo / "state")
    assert found(sd) == [(sha, "illegal", ".pre-commit-config.yaml")]
    assert "never writes" in sd.verify()["findings"][0]["message"]

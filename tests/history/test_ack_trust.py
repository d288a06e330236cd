"""Which acknowledgements count (statedir.history.ack_trust): one silences its finding only on
the clone that made it, or where its commit is signed by a key of an actor signers.yaml names
for acknowledging; never because a remote's acknowledged.yaml says so. A hostile collaborator
with push access (its own clone, plain git) hand-edits the key-bound orchestrator's run and
acknowledges the edit itself; the victim's clone is driven through the CLI."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from statedir.history import acknowledgements
from tests.support.history import forge
from tests.support.signing import NEEDS_SSH_KEYGEN, keygen
from tests.support.sync import git, network
from tests.support.util import cli, cli_json

pytestmark = NEEDS_SSH_KEYGEN

ORCH, REVIEWER = "pipeline_orchestrator", "reviewer"


@pytest.fixture
def keys(isolated: Path) -> dict[str, Path]:
    """Private keys: alice's is the orchestrator's, bob's the reviewer's, mallory's nobody's."""
    return keygen(isolated.parent / "keys", ("alice", "bob", "mallory"))


def run(clone: Path, *args: str, key: Path | None = None) -> subprocess.CompletedProcess[str]:
    return cli(*args, cwd=clone, env={"STATEDIR_SIGNING_KEY": str(key) if key else ""})


def done(clone: Path, *args: str, key: Path | None = None) -> None:
    proc = run(clone, *args, key=key)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)


def signed_network(base: Path, keys: dict[str, Path], *, acknowledgers: bool) -> dict[str, Path]:
    """Clones a (the collaborator's) and b (the victim's) of one remote, whose store binds the
    orchestrator to alice's key and the reviewer to bob's, and (with `acknowledgers`) names the
    reviewer for acknowledging; both clones hold it all."""
    c = network(base, ("a", "b"))
    done(c["a"], "signers", "add", ORCH, f"{keys['alice']}.pub", "--actor", ORCH, key=keys["alice"])
    done(c["a"], "signers", "add", REVIEWER, f"{keys['bob']}.pub", "--actor", ORCH, key=keys["alice"])
    if acknowledgers:
        done(c["a"], "signers", "acknowledgers", REVIEWER, "--actor", ORCH, key=keys["alice"])
    git(c["a"], "push", "-q", "origin", "HEAD:main")
    git(c["b"], "pull", "-q", "--no-rebase", "origin", "main")
    return c


def hand_edit(clone: Path, topic: str) -> str:
    """The orchestrator's run retitled by hand (a commit without statedir, unsigned)."""
    path = clone / "state/runs/r1/state.yaml"
    path.write_text(path.read_text().replace(path.read_text().split("topic: ", 1)[1].split("\n", 1)[0], topic))
    git(clone, "commit", "-q", "-am", "retitled")
    return git(clone, "rev-parse", "HEAD")


def kept(clone: Path) -> tuple[str, str, str, dict[str, bytes]]:
    """What a refusal leaves alone: HEAD, the branch, the index's entries and the work tree."""
    files = {p.relative_to(clone).as_posix(): p.read_bytes() for p in sorted(clone.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(clone).parts}
    return (git(clone, "rev-parse", "HEAD"), git(clone, "symbolic-ref", "HEAD"), git(clone, "ls-files", "-s"), files)


def refused(clone: Path, sha: str) -> dict[str, object]:
    """The victim's sync refuses the remote's history naming `sha`, changing nothing."""
    before = kept(clone)
    proc = cli("sync", "--json", cwd=clone)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED" and sha in {f["commit"] for f in error["details"]["findings"]}, error
    assert kept(clone) == before
    return error  # type: ignore[no-any-return]


# Slow: two clones, signed commits (ssh-keygen), a sync and verify (~3 CPU-s)
@pytest.mark.slow
def test_a_remote_cannot_acknowledge_its_own_forgery(tmp_path: Path, keys: dict[str, Path]) -> None:
    c = signed_network(tmp_path / "net", keys, acknowledgers=False)
    a, b = c["a"], c["b"]
    forged = hand_edit(a, "the collaborator's topic")
    done(a, "verify", "--acknowledge", forged, "--reason", "reviewed, fine", "--actor", "mallory")
    assert run(a, "verify").returncode == 0  # on the clone that made it, it counts
    git(a, "push", "-q", "origin", "HEAD:main")
    refused(b, forged)
    git(b, "pull", "-q", "--no-rebase", "origin", "main")  # a plain pull takes it: verify says so
    code, out = cli_json("verify", cwd=b)
    assert code == 1 and [f["commit"] for f in out["findings"]] == [forged], out  # type: ignore[index]
    assert [(n["commit"], n["by"]) for n in out["not_counted"]] == [(forged, "mallory")]  # type: ignore[index]
    assert "names no acknowledging actor" in out["not_counted"][0]["reason"]  # type: ignore[index]
    plain = run(b, "verify")
    assert "not counted" in plain.stdout and "acknowledged by mallory" in plain.stdout
    # the victim's own acknowledgement counts
    done(b, "verify", "--acknowledge", forged, "--reason", "I checked it myself", key=keys["alice"])
    code, out = cli_json("verify", cwd=b)
    assert code == 0 and [f["commit"] for f in out["acknowledged"]] == [forged], out  # type: ignore[index]


# Slow: two clones, signed commits, a sync and verify (~3 CPU-s)
@pytest.mark.slow
def test_a_request_id_copied_for_another_finding_counts_for_nothing(tmp_path: Path, keys: dict[str, Path]) -> None:
    c = signed_network(tmp_path / "net", keys, acknowledgers=False)
    a, b = c["a"], c["b"]
    first = hand_edit(a, "first edit")
    git(a, "push", "-q", "origin", "HEAD:main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    done(b, "verify", "--acknowledge", first, "--reason", "checked", key=keys["alice"])
    git(b, "push", "-q", "origin", "HEAD:main")
    git(a, "pull", "-q", "--no-rebase", "origin", "main")
    rid = next(e for e in _entries(a) if e["commit"] == first)["request_id"]  # the victim's, as its file shows it
    second = hand_edit(a, "second edit")
    request = {"at": "2026-01-01T00:00:00Z", "reason": "checked", "request_id": rid,
               "args": {"commit": second, "findings": [{"kind": "hand_edit", "file": "runs/r1/state.yaml"}]}}
    raw = (a / "state" / acknowledgements.FILE).read_bytes()
    forge(a, {acknowledgements.FILE: acknowledgements.appended(raw, acknowledgements.entries_of(request, ORCH))},
             action="acknowledge", actor=ORCH, request=request)
    git(a, "push", "-q", "origin", "HEAD:main")
    refused(b, second)
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    code, out = cli_json("verify", cwd=b)
    assert code == 1 and [f["commit"] for f in out["acknowledged"]] == [first], out  # type: ignore[index]
    assert second in [f["commit"] for f in out["findings"]]  # type: ignore[index]
    assert [n["commit"] for n in out["not_counted"]] == [second]  # type: ignore[index]


# Slow: two clones, signed commits, a sync and verify (~4 CPU-s)
@pytest.mark.slow
def test_an_acknowledgers_signed_acknowledgement_counts_everywhere(tmp_path: Path, keys: dict[str, Path]) -> None:
    c = signed_network(tmp_path / "net", keys, acknowledgers=True)
    a, b = c["a"], c["b"]
    edited = hand_edit(a, "reviewed edit")
    done(a, "verify", "--acknowledge", edited, "--reason", "the reviewer checked it", "--actor", REVIEWER,
         key=keys["bob"])
    git(a, "push", "-q", "origin", "HEAD:main")
    proc = cli("sync", "--json", cwd=b)
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "fast_forward", proc.stdout + proc.stderr
    code, out = cli_json("verify", cwd=b)
    assert code == 0 and [f["commit"] for f in out["acknowledged"]] == [edited], out  # type: ignore[index]
    # the same by someone who is not an acknowledger (unsigned, under a name of its own): it does not count
    other = hand_edit(a, "unreviewed edit")
    done(a, "verify", "--acknowledge", other, "--reason", "trust me", "--actor", "mallory")
    git(a, "push", "-q", "origin", "HEAD:main")
    error = refused(b, other)
    assert error["details"]["findings"][0]["commit"] == other  # type: ignore[index]
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    code, out = cli_json("verify", cwd=b)
    assert code == 1 and [n["commit"] for n in out["not_counted"]] == [other]  # type: ignore[index]
    assert "not signed" in out["not_counted"][0]["reason"]  # type: ignore[index]


# Slow: signed commits through the CLI (~2 CPU-s)
@pytest.mark.slow
def test_who_acknowledges_changes_only_with_an_acknowledgers_key(tmp_path: Path, keys: dict[str, Path]) -> None:
    c = signed_network(tmp_path / "net", keys, acknowledgers=True)
    a = c["a"]
    before = kept(a)
    code, out = cli_json("signers", "acknowledgers", ORCH, "--actor", ORCH, cwd=a,
                         env={"STATEDIR_SIGNING_KEY": str(keys["alice"])})
    assert code == 1 and out["error"]["code"] == "PERMISSION_DENIED", out  # type: ignore[index]
    assert "acknowledger's key" in out["error"]["message"]  # type: ignore[index]
    assert kept(a) == before
    assert "acknowledgers: reviewer\n" in run(a, "signers", "list").stdout
    done(a, "signers", "acknowledgers", REVIEWER, ORCH, "--actor", REVIEWER, key=keys["bob"])
    code, out = cli_json("signers", "list", cwd=a)
    assert code == 0 and {(r["actor"], r["acknowledger"]) for r in out} == {(REVIEWER, True), (ORCH, True)}  # type: ignore[union-attr,index]
    assert run(a, "verify").returncode == 0


def _entries(clone: Path) -> list[dict[str, object]]:
    from statedir.files import yaml

    path = clone / "state" / acknowledgements.FILE
    return yaml.to_plain(yaml.load(path.read_bytes(), acknowledgements.FILE))  # type: ignore[no-any-return]

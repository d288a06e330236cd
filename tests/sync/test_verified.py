"""A collaborator with push access sends commits that carry statedir's trailers but are no
legal statedir transition, one per kind of action (the bus's verbs, real and made up, the
research ledger, signers, templates) and files statedir never writes (an attributes file, a
file that is not YAML). Each is refused by `statedir sync` (the branch as it was) and reported
by `statedir verify` after a plain `git pull`, with the very findings sync gave."""
from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from statedir.files import yaml
from statedir.store import layout
from tests.support.history import forge
from tests.support.isolation import isolated_at
from tests.support.sync import git, network, ok
from tests.support.util import cli

# Slow: three clones of one remote; each forgery is pushed, refused by sync and reported by three
# verify runs: ~1 CPU-s a test.
pytestmark = pytest.mark.slow

S = "2026-06-30-gating"
SESSION = f"bus/{S}.yaml"
TEMPLATE = "templates/mypipe.yaml"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: a remote and clones a, b and c of a store with a run, a bus session whose
    phase is done, a research run with a claim and a result, and a run on a stored template."""
    root = tmp_path_factory.mktemp("forged-remote")
    with isolated_at(root) as env:
        env.chdir(root)
        c = network(root / "net")
        a = c["a"]
        ok(a, "bus", "init", S)
        for verb, field, value in (("set", "phases.0-req.status", "in_progress"), ("append", "phases.0-req.evidence",
                                   "a.md"), ("append", "phases.0-req.evidence", "b.md"),
                                   ("set", "phases.0-req.status", "done")):
            ok(a, "bus", verb, S, field, value)
        run = ok(a, "research", "--start-run", "--skill", "deep", "--question", "Offline?")["id"]
        ok(a, "research", "--record-claim", "--run-id", run, "--statement", "offline matters", "--confidence", "high")
        ok(a, "research", "--record-result", "--run-id", run, "--summary", "a summary")
        (root / "mypipe.yaml").write_text(_template())
        ok(a, "new", "t1", "--topic", "t", "--template", str(root / "mypipe.yaml"))
        git(a, "push", "-q", "origin", "HEAD:main")
        for name in ("b", "c"):
            git(c[name], "pull", "-q", "--no-rebase", "origin", "main")
    return root


def _template() -> str:
    from statedir.engine import template

    return template.shipped()["linear"].read_text().replace("name: linear", "name: mypipe")


@pytest.fixture
def clones(base: Path, tmp_path: Path) -> dict[str, Path]:
    """A copy of the base network for one test, each clone's origin pointed at the copy's remote."""
    shutil.copytree(base / "net", tmp_path / "net", symlinks=True)
    out = {name: tmp_path / "net" / name for name in ("a", "b", "c")}
    for clone in out.values():
        git(clone, "remote", "set-url", "origin", str(tmp_path / "net" / "remote.git"))
    shutil.copy(base / "mypipe.yaml", tmp_path / "mypipe.yaml")
    return out


def _read(a: Path, rel: str) -> dict[str, object]:
    return yaml.to_plain(yaml.load((a / "state" / rel).read_bytes(), rel))  # type: ignore[no-any-return]


def _text(rel: str, data: dict[str, object]) -> bytes:
    """A store file's bytes as statedir writes them (its schema line, then the YAML)."""
    return yaml.dump(data, layout.schema_ref(rel)).encode()


def _session(a: Path, **changes: object) -> bytes:
    return _text(SESSION, {**_read(a, SESSION), **changes})


def _claim(a: Path) -> str:
    return next((a / "state" / "research" / "claims").iterdir()).relative_to(a / "state").as_posix()


def status_moved_back(a: Path) -> tuple[str, str]:
    return forge(a, {SESSION: _session(a, phases={"0-req": {"status": "todo", "evidence": ["a.md", "b.md"]}})},
                 action="bus-set", run=S), SESSION


def list_rewritten(a: Path) -> tuple[str, str]:
    return forge(a, {SESSION: _session(a, phases={"0-req": {"status": "done", "evidence": ["b.md", "c.md"]}})},
                 action="bus-append", run=S), SESSION


def made_up_verb(a: Path) -> tuple[str, str]:
    return forge(a, {SESSION: _session(a, phases={})}, action="bus-reset", run=S), SESSION


def claim_rewritten(a: Path) -> tuple[str, str]:
    rel = _claim(a)
    return forge(a, {rel: _text(rel, {**_read(a, rel), "statement": "offline does not matter"})},
                 action="research"), rel


def runs_deleted(a: Path) -> tuple[str, str]:
    runs = sorted(p.relative_to(a / "state").as_posix() for p in (a / "state" / "research" / "runs").iterdir())
    return forge(a, dict.fromkeys(runs), action="research"), runs[0]


def union_attributes(a: Path) -> tuple[str, str]:
    rel = "research/.gitattributes"
    return forge(a, {rel: b"*.yaml merge=union\n"}, action="research"), rel


def not_yaml(a: Path) -> tuple[str, str]:
    rel = "bus/notes.txt"
    return forge(a, {rel: b"evidence, trust me\n"}, action="bus-set", run=S), rel


def signers_unsigned(a: Path) -> tuple[str, str]:
    key = a.parent / "mallory"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    public = " ".join(key.with_suffix(".pub").read_text().split()[:2])
    from statedir.files.signers_file import Signers
    from statedir.store import commit_keys

    data = commit_keys.dump(Signers([{"actor": "pipeline_orchestrator", "key": public}]))
    args = {"op": "add", "actor": "pipeline_orchestrator", "key": public}
    return forge(a, {"signers.yaml": data}, action="signers", request={"args": args}), "signers.yaml"


def template_rewritten(a: Path) -> tuple[str, str]:
    ok(a, "new", "t2", "--topic", "t", "--template", str(a.parent.parent / "mypipe.yaml"))
    stored = a / "state" / TEMPLATE
    stored.write_bytes(stored.read_bytes().replace(b"Linear Pipeline", b"Other rules, same version"))
    git(a, "commit", "-q", "-a", "--amend", "--no-edit")  # rides in a legal `new`, under its trailers
    return git(a, "rev-parse", "HEAD"), TEMPLATE


def templates_action(a: Path) -> tuple[str, str]:
    rel = "templates/evil.yaml"
    return forge(a, {rel: (a / "state" / TEMPLATE).read_bytes().replace(b"mypipe", b"evil")},
                 action="templates"), rel


FORGERIES: list[tuple[Callable[[Path], tuple[str, str]], str]] = [
    (status_moved_back, "illegal"), (list_rewritten, "illegal"), (made_up_verb, "illegal"),
    (claim_rewritten, "illegal"), (runs_deleted, "illegal"), (union_attributes, "illegal"), (not_yaml, "illegal"),
    (signers_unsigned, "signature"), (template_rewritten, "illegal"), (templates_action, "illegal"),
]


@pytest.mark.parametrize("forgery, kind", FORGERIES, ids=[f.__name__ for f, _ in FORGERIES])
def test_sync_refuses_and_verify_reports_a_forged_commit(clones: dict[str, Path],
                                                         forgery: Callable[[Path], tuple[str, str]],
                                                         kind: str) -> None:
    if forgery is signers_unsigned and shutil.which("ssh-keygen") is None:
        pytest.skip("no ssh-keygen to make a key")
    a, b, c = clones["a"], clones["b"], clones["c"]
    base = git(b, "rev-parse", "HEAD")
    sha, file = forgery(a)
    git(a, "push", "-q", "origin", "HEAD:main")

    proc = cli("sync", "--json", cwd=b)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "MERGE_REFUSED", error
    assert git(b, "rev-parse", "HEAD") == base and git(b, "status", "--porcelain") == ""

    git(c, "pull", "-q", "--no-rebase", "origin", "main")
    assert git(c, "rev-parse", "HEAD") == sha
    proc = cli("verify", "--json", cwd=c)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert (sha, kind, file) in {(f["commit"], f["kind"], f["file"]) for f in findings}, findings
    assert {f["commit"] for f in findings} == {sha}  # the history before it stays clean
    since = json.loads(cli("verify", "--since", base, "--json", cwd=c).stdout)["findings"]
    assert error["details"]["findings"] == since  # sync's check of incoming history is verify's


def test_an_oversized_file_from_a_remote_is_refused_and_reported(clones: dict[str, Path]) -> None:
    """A store file past the 16 MiB any reader accepts, pushed under a transition's trailers:
    sync refuses it (the branch as it was), verify after a plain pull names it, no traceback."""
    a, b, c = clones["a"], clones["b"], clones["c"]
    base = git(b, "rev-parse", "HEAD")
    rel = next(p for p in sorted((a / "state" / "runs" / "r1" / "history" / "transitions").iterdir()))
    rel_s = rel.relative_to(a / "state").as_posix()
    big = rel.read_bytes() + b"- {at: '2026-01-01T00:00:00Z', note: '" + b"x" * (yaml.MAX_BYTES + 1) + b"'}\n"
    sha = forge(a, {rel_s: big}, action="set", run="r1")
    git(a, "push", "-q", "origin", "HEAD:main")
    proc = cli("sync", "--json", cwd=b)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] in ("MERGE_REFUSED", "BAD_FILE", "VALIDATION_FAILED")
    assert git(b, "rev-parse", "HEAD") == base and git(b, "status", "--porcelain") == ""
    git(c, "pull", "-q", "--no-rebase", "origin", "main")
    proc = cli("verify", "--json", cwd=c)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert sha in {f["commit"] for f in json.loads(proc.stdout)["findings"]}

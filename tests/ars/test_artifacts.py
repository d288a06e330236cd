"""seal against hostile artifact roots: every refusal is BAD_FILE or INVALID_VALUE, nothing changes."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from statedir import api
from tests.support.util import cli_json, copy_of, snapshot

RUN = "r1"
LOG = "explicit_user_request_log"


def _terminal_run(sd: api.StateDir, paths: list[str]) -> None:
    sd.new(RUN, topic="t")
    for n, path in enumerate(paths):
        sd.bind(RUN, "compliance_report", artifact=f"c{n}", role="compliance_report",
                group=f"SOURCE-GROUP-c{n}", path=path)
    sd.pipeline(RUN, "aborted", reason="ended to test sealing")


def terminal_run(repo: Path, factory: pytest.TempPathFactory, name: str, paths: list[str]) -> None:
    """The test's store given `_terminal_run(paths)`: made once per process (as `name`) and copied."""
    copy_of(f"hostile-roots-{name}", lambda made: _terminal_run(made, paths), repo, factory)


def symlinked_file(root: Path, outside: Path) -> None:
    (root / "logs").mkdir()
    (root / "logs" / "x.json").symlink_to(outside / "secret.json")


def symlinked_dir(root: Path, outside: Path) -> None:
    (root / "logs").symlink_to(outside, target_is_directory=True)


def huge(root: Path, outside: Path) -> None:
    (root / "logs").mkdir()
    with open(root / "logs" / "x.json", "wb") as handle:
        handle.truncate((8 << 20) + 1)  # sparse: one byte over the per-artifact cap


def hard_link(root: Path, outside: Path) -> None:
    (root / "logs").mkdir()
    os.link(outside / "secret.json", root / "logs" / "x.json")


def fifo(root: Path, outside: Path) -> None:
    (root / "logs").mkdir()
    os.mkfifo(root / "logs" / "x.json")


def missing(root: Path, outside: Path) -> None:
    (root / "logs").mkdir()


@pytest.mark.parametrize("plant", [symlinked_file, symlinked_dir, huge, hard_link, fifo, missing])
def test_a_hostile_artifact_is_refused_and_changes_nothing(sd: api.StateDir, repo: Path,
                                                           tmp_path_factory: pytest.TempPathFactory,
                                                           plant: Callable[[Path, Path], None]) -> None:
    root, outside = repo / "artifacts", repo.parent / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.json").write_text('{"secret": true}\n')
    terminal_run(repo, tmp_path_factory, "one-bound", ["logs/x.json"])
    plant(root, outside)
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(root), cwd=repo)
    assert code == 2 and out["error"]["code"] == "BAD_FILE", out
    assert out["error"]["details"]["artifact_id"] == "c0"
    assert snapshot(repo) == before
    assert sd.get(RUN, "pipeline_state") == "aborted"


def test_artifacts_over_the_run_total_are_refused(sd: api.StateDir, repo: Path) -> None:
    root = repo / "artifacts"
    root.mkdir()
    for n in range(9):  # 9 x 8 MiB > the 64 MiB a run may bind
        with open(root / f"c{n}.json", "wb") as handle:
            handle.truncate(8 << 20)
    _terminal_run(sd, [f"c{n}.json" for n in range(9)])
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(root), cwd=repo)
    assert code == 2 and "64 MiB a run" in out["error"]["message"]
    assert out["error"]["details"]["artifact_id"] == "c8"
    assert snapshot(repo) == before


def test_a_symlinked_root_is_refused(sd: api.StateDir, repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    (repo / "real").mkdir()
    (repo / "link").symlink_to(repo / "real", target_is_directory=True)
    terminal_run(repo, tmp_path_factory, "none-bound", [])
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(repo / "link"), cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE" and "symlink" in out["error"]["message"]
    code, out = cli_json("seal", RUN, "--artifact-root", str(repo / "nowhere"), cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE"
    assert snapshot(repo) == before


@pytest.mark.parametrize("path", ["../outside/secret.json", "/etc/passwd", "a/./b", "a//b", "a\\b", "a/"])
def test_paths_that_leave_the_root_are_refused_from_a_bindings_file(sd: api.StateDir, repo: Path,
                                                                   tmp_path_factory: pytest.TempPathFactory,
                                                                   path: str) -> None:
    from statedir.engine.adjudication_contract import initial_rows

    terminal_run(repo, tmp_path_factory, "none-bound", [])
    rows = initial_rows()
    rows[3] = {"source_family": "explicit_user_request", "capture_state": "captured", "reason_code": None,
               "artifacts": [{"artifact_id": "x", "artifact_role": LOG, "artifact_group_id": "SOURCE-GROUP-x",
                              "artifact_group_stage": None, "relative_path": path}]}
    (repo / "rows.json").write_text(json.dumps(rows))
    before = snapshot(repo)
    code, out = cli_json("seal", RUN, "--artifact-root", str(repo), "--bindings", str(repo / "rows.json"), cwd=repo)
    assert code == 2 and out["error"]["code"] == "INVALID_VALUE" and "relative path" in out["error"]["message"]
    assert snapshot(repo) == before

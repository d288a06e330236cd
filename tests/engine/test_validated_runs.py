"""A whole-store validate remembers the runs it found valid (statedir.engine.validated_runs): the
next one checks only the runs that changed since, finds a hand edit however its times are set
back, and checks everything again without the file, under other rules or another store config."""
from __future__ import annotations

import os
from pathlib import Path

from statedir import api
from statedir.engine import validate
from tests.support import opened
from tests.support.util import cli


def _runs_read(root: Path) -> set[str]:
    """The runs whose files a whole-store validate opens."""
    found = set()
    for path, _, _ in opened.record(lambda: validate.store(root)):
        rel = os.path.relpath(path, root).split(os.sep)
        if len(rel) > 2 and rel[0] == "runs":
            found.add(rel[1])
    return found


def _three(sd: api.StateDir) -> Path:
    for run in ("r1", "r2", "r3"):
        sd.new(run, topic="t")
    return sd.store.root


def test_after_one_transition_only_its_run_is_checked_again(sd: api.StateDir) -> None:
    root = _three(sd)
    assert _runs_read(root) == {"r1", "r2", "r3"}
    assert _runs_read(root) == set()  # nothing changed: nothing read again
    sd.set("r2", "topic", "another", reason="r")
    assert _runs_read(root) == {"r2"}
    assert validate.store(root) == []


def test_a_hand_edit_is_found_even_with_its_times_set_back(sd: api.StateDir) -> None:
    root = _three(sd)
    assert validate.store(root) == []
    state = root / "runs" / "r1" / "state.yaml"
    before = state.stat()
    text = state.read_text()
    state.write_text(text.replace("run_id: r1", "run_id: 5", 1))
    os.utime(state, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime back as it was: the change time is not
    problems = validate.store(root)
    assert [p.file for p in problems] == ["runs/r1/state.yaml"], problems
    assert validate.store(root) == problems  # a run with a problem is never remembered as valid
    state.write_text(text)
    assert validate.store(root) == []


def test_without_the_file_or_with_another_store_config_every_run_is_checked(sd: api.StateDir) -> None:
    root = _three(sd)
    assert validate.store(root) == []
    (sd.store.cache_dir / "validated-runs.json").unlink()
    assert _runs_read(root) == {"r1", "r2", "r3"}
    config = root / "statedir.yaml"
    config.write_text(config.read_text())  # the same bytes written again: its change time moves
    assert _runs_read(root) == {"r1", "r2", "r3"}
    (sd.store.cache_dir / "validated-runs.json").write_text("{not json")
    assert _runs_read(root) == {"r1", "r2", "r3"}


def test_the_cli_counts_the_remembered_files_as_checked(sd: api.StateDir, repo: Path) -> None:
    _three(sd)
    first = cli("validate", "-v", cwd=repo).stdout
    assert first == cli("validate", "-v", cwd=repo).stdout and "files checked: all valid" in first, first

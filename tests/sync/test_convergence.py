"""Every accepted transition survives a merge, and the merge takes what the rules allow: the
issue's cases through the real CLI, with real clones of one bare remote. A stopped clock
(tests/sync/clock) makes "the same second" certain."""
from __future__ import annotations

from pathlib import Path

from statedir.files import yaml
from tests.sync.helpers import clean, entries, git, network, ok, ok_at, second, store_files

STAGE_ONE = ("rq_brief", "methodology_blueprint", "bibliography", "synthesis_report")


def _converge(c: dict[str, Path], order: tuple[str, ...]) -> None:
    for name in order:
        ok(c[name], "sync")
    files = store_files(c[order[-1]])
    for name, clone in c.items():
        assert store_files(clone) == files, name
        clean(clone)


def _doc(clone: Path, rel: str) -> dict:
    return yaml.to_plain(yaml.load((clone / "state" / rel).read_bytes(), rel))


def _request_ids(clone: Path, rev_range: str) -> list[str]:
    out = git(clone, "log", "--format=%(trailers:key=Statedir-Request-Id,valueonly)", rev_range)
    return [line for line in out.split("\n") if line]


def test_four_pipeline_moves_in_one_second_on_one_machine_keep_their_order(tmp_path: Path) -> None:
    c = network(tmp_path, ("a", "b"))
    when = second()
    moves = ("paused", "running", "paused", "running")
    for state in moves:
        ok_at(when, c["a"], "pipeline", "r1", state)
    written = [e["summary"] for e in entries(c["a"], "r1") if e["action"] == "pipeline"]
    assert len(written) == 4 and written[0] == written[2] and written[1] == written[3]
    ok_at(when, c["b"], "set", "r1", "language", "de", "--reason", "from b")  # the same log segment
    _converge(c, ("a", "b", "a"))
    for clone in c.values():
        assert [e["summary"] for e in entries(clone, "r1") if e["action"] == "pipeline"] == written
    assert git(c["a"], "log", "--format=%s", "--grep", "^pipeline ").count("\n") + 1 == 4
